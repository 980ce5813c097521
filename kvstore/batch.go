package kvstore

import (
	"errors"
	"fmt"
)

// MaxBatchOps is the most operations a Batch takes. etcd refuses a
// transaction with more than --max-txn-ops (default 128) operations at
// one level, counting the two comparisons of each conditional write
// against the same budget: 126 conditional writes is the most a server
// with the default takes.
const MaxBatchOps = 126

// ErrInvalidBatch is returned by Batch for more than MaxBatchOps
// operations or for two operations on one key.
var ErrInvalidBatch = errors.New("invalid batch")

// Op is one write of a Batch: a conditional put of Value (written unless
// the key already holds Value, bound to the session lease when Lease is
// set, like UpdateIfDifferent), or with Delete, a deletion.
type Op struct {
	Key    string
	Value  []byte
	Lease  bool
	Delete bool
}

// OpResult says what one Op of a Batch did.
type OpResult struct {
	// Wrote is true when the op changed the store: a put that wrote, a
	// delete that removed an existing key.
	Wrote bool
	// Existed says whether the key existed before the op.
	Existed bool
	// Prev is the value the key held before the op when it wrote and the
	// key existed (the value it overwrote or deleted).
	Prev []byte
}

// CheckBatch validates the ops of a Batch as every Backend does: at most
// MaxBatchOps, at most one per key (etcd refuses a transaction that
// writes a key twice).
func CheckBatch(ops []Op) error {
	if len(ops) > MaxBatchOps {
		return fmt.Errorf("batch of %d ops: %w: at most %d", len(ops), ErrInvalidBatch, MaxBatchOps)
	}
	seen := make(map[string]struct{}, len(ops))
	for _, op := range ops {
		if _, dup := seen[op.Key]; dup {
			return fmt.Errorf("batch writes %s twice: %w", op.Key, ErrInvalidBatch)
		}
		seen[op.Key] = struct{}{}
	}
	return nil
}
