package kvstore

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

func (e *etcdBackend) Get(ctx context.Context, key string) (_ []byte, err error) {
	ctx, done := e.begin(ctx, "get")
	defer done(&err)
	m := e.hist.mark()
	resp, err := e.client.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	e.hist.linearizable(m, resp.Header)
	if len(resp.Kvs) == 0 {
		return nil, nil
	}
	return resp.Kvs[0].Value, nil
}

func (e *etcdBackend) ListPrefix(ctx context.Context, prefix string) (_ map[string]Value, err error) {
	ctx, done := e.begin(ctx, "list")
	defer done(&err)
	out := map[string]Value{}
	_, err = e.listPages(ctx, prefix, 0, func(kv *clientv3.GetResponse) {
		for _, kv := range kv.Kvs {
			out[string(kv.Key)] = Value{Data: kv.Value, ModRevision: kv.ModRevision, LeaseID: kv.Lease}
		}
	})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", prefix, err)
	}
	return out, nil
}

// listPages lists prefix in pages of ListLimit keys, all at one revision
// (rev, or the current one when rev is 0). It returns that revision.
// The request for the next page is in flight while page handles the
// current one, so the etcd's work and the caller's decoding overlap.
func (e *etcdBackend) listPages(ctx context.Context, prefix string, rev int64, page func(*clientv3.GetResponse)) (int64, error) {
	end := clientv3.GetPrefixRangeEnd(prefix)
	resp, err := e.getPage(ctx, prefix, end, rev)
	for {
		if err != nil {
			return 0, err
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		var next chan pageResult
		if resp.More && len(resp.Kvs) > 0 {
			next = make(chan pageResult, 1)
			from := string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
			go func() {
				r, err := e.getPage(ctx, from, end, rev)
				next <- pageResult{r, err}
			}()
		}
		page(resp)
		if next == nil {
			return rev, nil
		}
		r := <-next // always waited for: no request outlives the list
		resp, err = r.resp, r.err
	}
}

// pageResult is the answer to a prefetched page request.
type pageResult struct {
	resp *clientv3.GetResponse
	err  error
}

// getPage requests at most ListLimit keys from from to end, at rev
// unless it is 0.
func (e *etcdBackend) getPage(ctx context.Context, from, end string, rev int64) (*clientv3.GetResponse, error) {
	opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(e.opts.ListLimit)}
	if rev > 0 {
		opts = append(opts, clientv3.WithRev(rev))
	}
	m := e.hist.mark()
	resp, err := e.client.Get(ctx, from, opts...)
	if err != nil {
		return nil, err
	}
	e.hist.linearizable(m, resp.Header)
	return resp, nil
}

func (e *etcdBackend) Update(ctx context.Context, key string, value []byte, lease bool) (err error) {
	ctx, done := e.begin(ctx, "update")
	defer done(&err)
	if err := e.waitWrite(ctx); err != nil {
		return fmt.Errorf("update %s: %w", key, err)
	}
	return e.withLease(ctx, key, lease, func(opts []clientv3.OpOption) error {
		m := e.hist.mark()
		resp, err := e.client.Put(ctx, key, string(value), opts...)
		if err == nil {
			e.hist.linearizable(m, resp.Header)
		}
		return err
	})
}

// withLease runs a write with the session lease option when lease is set.
// If etcd says the lease is gone, the lease is dropped and the write is
// tried once more on a new lease.
func (e *etcdBackend) withLease(ctx context.Context, key string, lease bool, write func([]clientv3.OpOption) error) error {
	for attempt := 0; ; attempt++ {
		var opts []clientv3.OpOption
		var id clientv3.LeaseID
		if lease {
			var err error
			if id, err = e.leases.leaseFor(ctx, key); err != nil {
				return fmt.Errorf("write %s: %w", key, err)
			}
			opts = append(opts, clientv3.WithLease(id))
		}
		err := write(opts)
		if lease && errors.Is(err, rpctypes.ErrLeaseNotFound) && attempt == 0 {
			e.leases.expire(id)
			continue
		}
		if err != nil {
			if lease {
				e.leases.release(key)
			}
			return fmt.Errorf("write %s: %w", key, err)
		}
		if !lease {
			e.leases.release(key)
		}
		return nil
	}
}

func (e *etcdBackend) UpdateIfDifferent(ctx context.Context, key string, value []byte, lease bool) (wrote bool, err error) {
	ctx, done := e.begin(ctx, "update-if-different")
	defer done(&err)
	if err := e.waitWrite(ctx); err != nil {
		return false, fmt.Errorf("update %s: %w", key, err)
	}
	// One round trip: write unless the key already holds value on the
	// lease it should have.
	err = e.withLease(ctx, key, lease, func(opts []clientv3.OpOption) error {
		var id int64
		if lease {
			l, _ := e.leases.leaseOf(key)
			id = int64(l)
		}
		m := e.hist.mark()
		resp, err := e.client.Txn(ctx).
			If(clientv3.Compare(clientv3.Value(key), "=", string(value)),
				clientv3.Compare(clientv3.LeaseValue(key), "=", id)).
			Else(clientv3.OpPut(key, string(value), opts...)).
			Commit()
		if err != nil {
			return err
		}
		e.hist.linearizable(m, resp.Header)
		wrote = !resp.Succeeded
		return nil
	})
	return wrote, err
}

func (e *etcdBackend) CreateOnly(ctx context.Context, key string, value []byte, lease bool) (created bool, err error) {
	ctx, done := e.begin(ctx, "create-only")
	defer done(&err)
	if err := e.waitWrite(ctx); err != nil {
		return false, fmt.Errorf("create %s: %w", key, err)
	}
	err = e.withLease(ctx, key, lease, func(opts []clientv3.OpOption) error {
		m := e.hist.mark()
		resp, err := e.client.Txn(ctx).
			If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
			Then(clientv3.OpPut(key, string(value), opts...)).
			Commit()
		if err != nil {
			return err
		}
		e.hist.linearizable(m, resp.Header)
		created = resp.Succeeded
		return nil
	})
	if err == nil && !created && lease {
		e.leases.release(key)
	}
	return created, err
}

func (e *etcdBackend) Delete(ctx context.Context, key string) (err error) {
	ctx, done := e.begin(ctx, "delete")
	defer done(&err)
	if err := e.waitWrite(ctx); err != nil {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	m := e.hist.mark()
	resp, err := e.client.Delete(ctx, key)
	if err != nil {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	e.hist.linearizable(m, resp.Header)
	e.leases.release(key)
	return nil
}

func (e *etcdBackend) DeletePrefix(ctx context.Context, prefix string) (err error) {
	ctx, done := e.begin(ctx, "delete-prefix")
	defer done(&err)
	if err := e.waitWrite(ctx); err != nil {
		return fmt.Errorf("delete prefix %s: %w", prefix, err)
	}
	m := e.hist.mark()
	resp, err := e.client.Delete(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		return fmt.Errorf("delete prefix %s: %w", prefix, err)
	}
	e.hist.linearizable(m, resp.Header)
	e.leases.releasePrefix(prefix)
	return nil
}
