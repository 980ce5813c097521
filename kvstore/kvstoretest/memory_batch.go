package kvstoretest

import (
	"bytes"
	"context"

	"github.com/apiary-net/apiary/kvstore"
)

// Batch implements kvstore.Backend: the ops are applied under the store's
// lock, so no reader sees part of a batch.
func (b *MemoryBackend) Batch(ctx context.Context, ops []kvstore.Op) ([]kvstore.OpResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := kvstore.CheckBatch(ops); err != nil {
		return nil, err
	}
	b.m.mu.Lock()
	defer b.m.mu.Unlock()
	out := make([]kvstore.OpResult, len(ops))
	for i, op := range ops {
		old, existed := b.m.data[op.Key]
		r := kvstore.OpResult{Existed: existed}
		switch {
		case op.Delete:
			r.Wrote = existed
			b.m.del(op.Key)
		case existed && bytes.Equal(old.data, op.Value) && old.lease == b.leaseID(op.Lease):
		default:
			r.Wrote = true
			b.m.put(op.Key, op.Value, b.leaseID(op.Lease))
		}
		if r.Wrote && existed {
			r.Prev = bytes.Clone(old.data)
		}
		out[i] = r
	}
	return out, nil
}
