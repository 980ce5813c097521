package kvstore

import (
	"context"
	"errors"
	"sync/atomic"
)

// Client is the agent's kvstore: the Backend of --kvstore, available once
// the kvstore cell has started, or a disabled one in standalone mode.
type Client interface {
	Backend
	// Enabled reports whether a kvstore is configured.
	Enabled() bool
}

// ErrNotStarted is returned when the client is used before the kvstore
// cell's start hook ran (a cell used it in its constructor).
var ErrNotStarted = errors.New("kvstore client used before the kvstore cell started")

// NewDeferredClient returns a Client whose backend is set later with
// SetBackend (the kvstore cell creates it at start); with enabled false,
// a client of the disabled backend (standalone mode).
func NewDeferredClient(enabled bool) *DeferredClient {
	return &DeferredClient{client{enabled: enabled}}
}

// DeferredClient is a Client whose backend is set at start. Used before
// that, it fails with ErrNotStarted.
type DeferredClient struct{ client }

// SetBackend sets the backend the client delegates to.
func (c *DeferredClient) SetBackend(b Backend) { c.backend.Store(&b) }

// Backend returns the backend set with SetBackend (nil before).
func (c *DeferredClient) Backend() Backend {
	if b := c.backend.Load(); b != nil {
		return *b
	}
	return nil
}

// client delegates to the backend created at start.
type client struct {
	enabled bool
	backend atomic.Pointer[Backend]
}

var _ Client = (*client)(nil)

func (c *client) Enabled() bool { return c.enabled }

func (c *client) get() (Backend, error) {
	if !c.enabled {
		return disabledBackend{}, nil
	}
	if b := c.backend.Load(); b != nil {
		return *b, nil
	}
	return nil, ErrNotStarted
}

func (c *client) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := c.get()
	if err != nil {
		return nil, err
	}
	return b.Get(ctx, key)
}

func (c *client) ListPrefix(ctx context.Context, prefix string) (map[string]Value, error) {
	b, err := c.get()
	if err != nil {
		return nil, err
	}
	return b.ListPrefix(ctx, prefix)
}

func (c *client) Update(ctx context.Context, key string, value []byte, lease bool) error {
	b, err := c.get()
	if err != nil {
		return err
	}
	return b.Update(ctx, key, value, lease)
}

func (c *client) UpdateIfDifferent(ctx context.Context, key string, value []byte, lease bool) (bool, error) {
	b, err := c.get()
	if err != nil {
		return false, err
	}
	return b.UpdateIfDifferent(ctx, key, value, lease)
}

func (c *client) CreateOnly(ctx context.Context, key string, value []byte, lease bool) (bool, error) {
	b, err := c.get()
	if err != nil {
		return false, err
	}
	return b.CreateOnly(ctx, key, value, lease)
}

func (c *client) Delete(ctx context.Context, key string) error {
	b, err := c.get()
	if err != nil {
		return err
	}
	return b.Delete(ctx, key)
}

func (c *client) DeletePrefix(ctx context.Context, prefix string) error {
	b, err := c.get()
	if err != nil {
		return err
	}
	return b.DeletePrefix(ctx, prefix)
}

func (c *client) Batch(ctx context.Context, ops []Op) ([]OpResult, error) {
	b, err := c.get()
	if err != nil {
		return nil, err
	}
	return b.Batch(ctx, ops)
}

func (c *client) ListAndWatch(ctx context.Context, prefix string) <-chan Event {
	b, err := c.get()
	if err != nil {
		return disabledBackend{}.ListAndWatch(ctx, prefix)
	}
	return b.ListAndWatch(ctx, prefix)
}

func (c *client) LockPath(ctx context.Context, path string) (Unlocker, error) {
	b, err := c.get()
	if err != nil {
		return nil, err
	}
	return b.LockPath(ctx, path)
}

func (c *client) OnLeaseExpired(prefix string, fn func(key string)) {
	if b, err := c.get(); err == nil {
		b.OnLeaseExpired(prefix, fn)
	}
}

func (c *client) Status() Status {
	b, err := c.get()
	if err != nil {
		return Status{State: StateFailure, Message: err.Error()}
	}
	return b.Status()
}

func (c *client) Close() {
	if b, err := c.get(); err == nil {
		b.Close()
	}
}
