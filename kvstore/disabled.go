package kvstore

import "context"

// disabledBackend is the Backend of an agent without a kvstore
// (standalone mode): every operation fails with ErrDisabled.
type disabledBackend struct{}

var _ Backend = disabledBackend{}

func (disabledBackend) Get(context.Context, string) ([]byte, error) { return nil, ErrDisabled }

func (disabledBackend) ListPrefix(context.Context, string) (map[string]Value, error) {
	return nil, ErrDisabled
}

func (disabledBackend) Update(context.Context, string, []byte, bool) error { return ErrDisabled }

func (disabledBackend) UpdateIfDifferent(context.Context, string, []byte, bool) (bool, error) {
	return false, ErrDisabled
}

func (disabledBackend) CreateOnly(context.Context, string, []byte, bool) (bool, error) {
	return false, ErrDisabled
}

func (disabledBackend) Delete(context.Context, string) error       { return ErrDisabled }
func (disabledBackend) DeletePrefix(context.Context, string) error { return ErrDisabled }

func (disabledBackend) ListAndWatch(context.Context, string) <-chan Event {
	ch := make(chan Event)
	close(ch)
	return ch
}

func (disabledBackend) LockPath(context.Context, string) (Unlocker, error) { return nil, ErrDisabled }
func (disabledBackend) OnLeaseExpired(string, func(string))                {}

func (disabledBackend) Status() Status {
	return Status{State: StateDisabled, Message: "standalone mode: --kvstore is empty"}
}

func (disabledBackend) Close() {}

func (disabledBackend) Batch(context.Context, []Op) ([]OpResult, error) { return nil, ErrDisabled }
