package allocator

import "sync"

// KeyMutex serialises the allocations and releases of one key within
// this process; different keys proceed in parallel. The zero value is
// ready; the CiliumIdentity allocator of policy/identity/identitycache
// uses it too.
type KeyMutex struct {
	mu    sync.Mutex
	locks map[string]*keyLock
}

type keyLock struct {
	mu      sync.Mutex
	waiters int
}

// Lock takes the lock of key and returns its unlock function.
func (k *KeyMutex) Lock(key string) func() {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*keyLock{}
	}
	l, ok := k.locks[key]
	if !ok {
		l = &keyLock{}
		k.locks[key] = l
	}
	l.waiters++
	k.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		k.mu.Lock()
		l.waiters--
		if l.waiters == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
}
