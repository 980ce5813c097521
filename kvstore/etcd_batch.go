package kvstore

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Batch writes ops in one etcd transaction. Each put is a nested
// transaction that compares the key's value and lease and writes only when
// they differ (as UpdateIfDifferent does); each delete asks for the
// previous value. If etcd says a lease is gone, the dead leases are
// dropped and the batch is tried once more on a new lease.
func (e *etcdBackend) Batch(ctx context.Context, ops []Op) (_ []OpResult, err error) {
	ctx, done := e.begin(ctx, "batch")
	defer done(&err)
	if err := CheckBatch(ops); err != nil {
		return nil, err
	}
	if len(ops) == 0 {
		return nil, nil
	}
	if err := e.waitWrite(ctx); err != nil {
		return nil, fmt.Errorf("write batch of %d keys: %w", len(ops), err)
	}
	for attempt := 0; ; attempt++ {
		txnOps, leases, fresh, err := e.batchTxnOps(ctx, ops)
		if err == nil {
			var resp *clientv3.TxnResponse
			m := e.hist.mark()
			resp, err = e.client.Txn(ctx).Then(txnOps...).Commit()
			if err == nil {
				e.hist.linearizable(m, resp.Header)
				return e.batchResults(ops, resp), nil
			}
			if attempt == 0 && errors.Is(err, rpctypes.ErrLeaseNotFound) {
				for _, key := range fresh { // never written: not lost with the lease
					e.leases.release(key)
				}
				if e.expireDeadLeases(ctx, leases) {
					continue
				}
			}
		}
		for _, op := range ops {
			if op.Lease {
				e.leases.release(op.Key) // as withLease does after a failed write
			}
		}
		return nil, fmt.Errorf("write batch of %d keys from %s: %w", len(ops), ops[0].Key, err)
	}
}

// batchTxnOps turns ops into transaction operations and returns the
// leases they bind keys to and the keys that were bound to no lease
// before.
func (e *etcdBackend) batchTxnOps(ctx context.Context, ops []Op) (_ []clientv3.Op, leases map[clientv3.LeaseID]struct{}, fresh []string, _ error) {
	out := make([]clientv3.Op, 0, len(ops))
	leases = map[clientv3.LeaseID]struct{}{}
	for _, op := range ops {
		if op.Delete {
			out = append(out, clientv3.OpDelete(op.Key, clientv3.WithPrevKV()))
			continue
		}
		var id clientv3.LeaseID
		opts := []clientv3.OpOption{clientv3.WithPrevKV()}
		if op.Lease {
			if _, bound := e.leases.leaseOf(op.Key); !bound {
				fresh = append(fresh, op.Key)
			}
			var err error
			if id, err = e.leases.leaseFor(ctx, op.Key); err != nil {
				return nil, nil, nil, err
			}
			leases[id] = struct{}{}
			opts = append(opts, clientv3.WithLease(id))
		}
		out = append(out, clientv3.OpTxn(
			[]clientv3.Cmp{
				clientv3.Compare(clientv3.Value(op.Key), "=", string(op.Value)),
				clientv3.Compare(clientv3.LeaseValue(op.Key), "=", id),
			},
			nil,
			[]clientv3.Op{clientv3.OpPut(op.Key, string(op.Value), opts...)}))
	}
	return out, leases, fresh, nil
}

// batchResults reads what each op did from the transaction's responses.
func (e *etcdBackend) batchResults(ops []Op, resp *clientv3.TxnResponse) []OpResult {
	out := make([]OpResult, len(ops))
	for i, op := range ops {
		r := resp.Responses[i]
		if op.Delete {
			out[i] = deleteResult(r.GetResponseDeleteRange())
			e.leases.release(op.Key)
			continue
		}
		out[i] = putResult(r.GetResponseTxn())
		if !op.Lease {
			e.leases.release(op.Key)
		}
	}
	return out
}

func deleteResult(d *etcdserverpb.DeleteRangeResponse) OpResult {
	if d == nil || d.Deleted == 0 {
		return OpResult{}
	}
	r := OpResult{Wrote: true, Existed: true}
	if len(d.PrevKvs) > 0 {
		r.Prev = d.PrevKvs[0].Value
	}
	return r
}

func putResult(t *etcdserverpb.TxnResponse) OpResult {
	if t == nil || t.Succeeded {
		return OpResult{Existed: true} // it held the value already
	}
	r := OpResult{Wrote: true}
	if len(t.Responses) > 0 {
		if p := t.Responses[0].GetResponsePut(); p != nil && p.PrevKv != nil {
			r.Existed, r.Prev = true, p.PrevKv.Value
		}
	}
	return r
}

// expireDeadLeases asks etcd about each lease and drops the ones it no
// longer has; it reports whether it dropped any.
func (e *etcdBackend) expireDeadLeases(ctx context.Context, leases map[clientv3.LeaseID]struct{}) bool {
	dropped := false
	for id := range leases {
		resp, err := e.client.TimeToLive(ctx, id)
		if err == nil && resp.TTL == -1 {
			e.leases.expire(id)
			dropped = true
		}
	}
	return dropped
}
