package kvstore

import (
	"context"
	"errors"
)

// Errors returned by backends.
var (
	// ErrDisabled is returned by every operation when --kvstore is empty.
	ErrDisabled = errors.New("kvstore is disabled (--kvstore is empty)")
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("kvstore client is closed")
	// ErrLockLost is returned by Unlock when the lock's lease expired
	// while it was held.
	ErrLockLost = errors.New("lock lease expired while the lock was held")
)

// Value is a stored value with its etcd metadata.
type Value struct {
	Data        []byte
	ModRevision int64
	LeaseID     int64
}

// Backend is a key-value store. All operations take a context first and
// fail with the context's error when it ends.
type Backend interface {
	// Get returns the value of key, or nil when the key does not exist.
	Get(ctx context.Context, key string) ([]byte, error)
	// ListPrefix returns every key under prefix with its value.
	ListPrefix(ctx context.Context, prefix string) (map[string]Value, error)
	// Update writes key. With lease, the key is bound to the session
	// lease and vanishes when this agent stops renewing it.
	Update(ctx context.Context, key string, value []byte, lease bool) error
	// UpdateIfDifferent writes key unless it already holds value (and,
	// with lease, is bound to the current session lease). It reports
	// whether it wrote.
	UpdateIfDifferent(ctx context.Context, key string, value []byte, lease bool) (bool, error)
	// CreateOnly writes key only if it does not exist; it reports
	// whether it created it.
	CreateOnly(ctx context.Context, key string, value []byte, lease bool) (bool, error)
	// Delete removes key; a missing key is not an error.
	Delete(ctx context.Context, key string) error
	// DeletePrefix removes every key under prefix.
	DeletePrefix(ctx context.Context, prefix string) error
	// Batch applies ops in one transaction, all or none, and reports what
	// each did, in order. It takes at most MaxBatchOps ops, at most one
	// per key (else ErrInvalidBatch). For the write rate limit a batch is
	// one request.
	Batch(ctx context.Context, ops []Op) ([]OpResult, error)
	// ListAndWatch lists prefix and then watches it. The channel gets a
	// Create for every listed key, one ListDone, and then every change.
	// After a compaction or watch failure it re-lists and emits only the
	// differences (a Delete for keys that vanished meanwhile), so no
	// change is lost or duplicated. It is closed when ctx ends.
	ListAndWatch(ctx context.Context, prefix string) <-chan Event
	// LockPath acquires a distributed mutex at path, held on a separate
	// short lock lease. ctx bounds the wait.
	LockPath(ctx context.Context, path string) (Unlocker, error)
	// OnLeaseExpired registers fn to be called for every key under
	// prefix that was bound to a session lease that expired; stores use
	// it to write their keys again.
	OnLeaseExpired(prefix string, fn func(key string))
	// Status reports connectivity in Cilium's format.
	Status() Status
	// Close releases the session and stops every goroutine.
	Close()
}

// Unlocker releases a lock taken with LockPath.
type Unlocker interface {
	// Unlock releases the lock. It returns ErrLockLost if the lock's
	// lease expired while it was held.
	Unlock(ctx context.Context) error
}

// LockWatcher is implemented by the Unlockers of backends that can tell
// when a held lock is lost: the etcd backend's, whose locks live on a
// lease. A holder that acts alone while it holds the lock (a leader)
// stops acting when Lost is closed.
type LockWatcher interface {
	// Lost is closed when the lock's lease expired or was revoked (also
	// when the client is closed).
	Lost() <-chan struct{}
}

// State is the coarse state of the kvstore connection.
type State string

// The connection states.
const (
	StateOK State = "Ok"
	// StateConnecting: the start, until the first status check, or when
	// that check found no endpoint answering yet (the client is dialling).
	StateConnecting State = "Connecting"
	StateFailure    State = "Failure"
	StateDisabled   State = "Disabled"
)

// Status is what `apiary status` shows on the KVStore line.
type Status struct {
	State   State
	Message string
}
