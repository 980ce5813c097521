package store

// Key is one entry of a store, named relative to the store's prefix.
type Key interface {
	// GetKeyName returns the key's name below the prefix.
	GetKeyName() string
}

// LocalKey is a key this agent writes.
type LocalKey interface {
	Key
	// Marshal returns the stored value.
	Marshal() ([]byte, error)
}

// KeyFactory decodes a stored value. name is the key below the prefix.
type KeyFactory interface {
	Unmarshal(name string, value []byte) (Key, error)
}

// KeyFactoryFunc adapts a function to KeyFactory.
type KeyFactoryFunc func(name string, value []byte) (Key, error)

// Unmarshal calls f.
func (f KeyFactoryFunc) Unmarshal(name string, value []byte) (Key, error) { return f(name, value) }

// Observer is told about changes of a store's keys.
type Observer interface {
	// OnUpdate is called for a new or changed key.
	OnUpdate(k Key)
	// OnDelete is called with the last value of a removed key.
	OnDelete(k Key)
}

// Change is one change of a store's keys, as a BatchObserver gets it:
// a new or changed key, or, with Deleted, the last value of a removed
// key.
type Change struct {
	Key     Key
	Deleted bool
}

// BatchObserver is an Observer that takes the changes of several kvstore
// events at once. A WatchStore that lists a prefix or catches up on a
// watch hands them over in batches, in order, so that the observer
// takes its locks and tells its own listeners once per batch instead of
// once per key; OnUpdate and OnDelete are then not called. OnChanges
// must not keep changes (the store reuses it).
type BatchObserver interface {
	Observer
	OnChanges(changes []Change)
}

// ObserverFuncs adapts functions to Observer; nil functions are skipped.
type ObserverFuncs struct {
	Update func(Key)
	Delete func(Key)
}

// OnUpdate calls Update.
func (o ObserverFuncs) OnUpdate(k Key) {
	if o.Update != nil {
		o.Update(k)
	}
}

// OnDelete calls Delete.
func (o ObserverFuncs) OnDelete(k Key) {
	if o.Delete != nil {
		o.Delete(k)
	}
}

// KVPair is a generic key, its raw value kept as is; its factory is
// KVPairFactory. Tests and debugging tools use it.
type KVPair struct {
	Name  string
	Value []byte
}

// GetKeyName returns the name.
func (p *KVPair) GetKeyName() string { return p.Name }

// Marshal returns the raw value.
func (p *KVPair) Marshal() ([]byte, error) { return p.Value, nil }

// KVPairFactory decodes any value into a *KVPair.
var KVPairFactory = KeyFactoryFunc(func(name string, value []byte) (Key, error) {
	return &KVPair{Name: name, Value: value}, nil
})

// dirPrefix returns prefix with exactly one trailing slash.
func dirPrefix(prefix string) string {
	for len(prefix) > 0 && prefix[len(prefix)-1] == '/' {
		prefix = prefix[:len(prefix)-1]
	}
	return prefix + "/"
}
