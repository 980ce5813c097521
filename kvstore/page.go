package kvstore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// KeyValue is one key with its value.
type KeyValue struct {
	Key   string
	Value Value
}

// PrefixPager lists a prefix a page at a time. The etcd backend and the
// agent's Client implement it.
type PrefixPager interface {
	// ListPrefixPage returns, in byte order, at most limit keys under
	// prefix that sort after `after` (from the first when it is empty),
	// and whether more follow.
	ListPrefixPage(ctx context.Context, prefix, after string, limit int) (page []KeyValue, more bool, err error)
}

var (
	_ PrefixPager = (*etcdBackend)(nil)
	_ PrefixPager = (*client)(nil)
)

// ListPrefixPage lists one page of prefix from b: with b's own
// ListPrefixPage when it is a PrefixPager, else by listing the whole
// prefix and cutting the page out (which costs memory for the whole
// prefix; only test backends do that).
func ListPrefixPage(ctx context.Context, b Backend, prefix, after string, limit int) ([]KeyValue, bool, error) {
	if p, ok := b.(PrefixPager); ok {
		return p.ListPrefixPage(ctx, prefix, after, limit)
	}
	values, err := b.ListPrefix(ctx, prefix)
	if err != nil {
		return nil, false, err
	}
	var page []KeyValue
	for k, v := range values {
		if k > after {
			page = append(page, KeyValue{Key: k, Value: v})
		}
	}
	slices.SortFunc(page, func(a, b KeyValue) int { return strings.Compare(a.Key, b.Key) })
	if len(page) > limit {
		return page[:limit], true, nil
	}
	return page, false, nil
}

// ListPrefixPage implements PrefixPager on the backend started by the
// kvstore cell.
func (c *client) ListPrefixPage(ctx context.Context, prefix, after string, limit int) ([]KeyValue, bool, error) {
	b, err := c.get()
	if err != nil {
		return nil, false, err
	}
	return ListPrefixPage(ctx, b, prefix, after, limit)
}

// ListPrefixPage implements PrefixPager with one range request: from
// after (or prefix) to the end of prefix, limited to limit keys.
func (e *etcdBackend) ListPrefixPage(ctx context.Context, prefix, after string, limit int) (_ []KeyValue, _ bool, err error) {
	ctx, done := e.begin(ctx, "list")
	defer done(&err)
	if limit <= 0 {
		return nil, false, nil
	}
	from := prefix
	if next := after + "\x00"; next > from {
		from = next
	}
	if from == "" {
		from = "\x00" // etcd refuses an empty key; no key sorts before "\x00"
	}
	m := e.hist.mark()
	resp, err := e.client.Get(ctx, from, clientv3.WithRange(clientv3.GetPrefixRangeEnd(prefix)), clientv3.WithLimit(int64(limit)))
	if err != nil {
		return nil, false, fmt.Errorf("list %s after %q: %w", prefix, after, err)
	}
	e.hist.linearizable(m, resp.Header)
	page := make([]KeyValue, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		page = append(page, KeyValue{Key: string(kv.Key), Value: Value{Data: kv.Value, ModRevision: kv.ModRevision, LeaseID: kv.Lease}})
	}
	return page, resp.More, nil
}
