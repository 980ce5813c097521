package k8s

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// EventKind is what happened to an object.
type EventKind int

// The kinds of events.
const (
	// Upsert: the object was added or changed.
	Upsert EventKind = iota
	// Delete: the object was deleted; Object is its last known state.
	Delete
	// Sync: every object of the initial listing has been delivered.
	Sync
)

func (k EventKind) String() string {
	switch k {
	case Upsert:
		return "upsert"
	case Delete:
		return "delete"
	case Sync:
		return "sync"
	}
	return "unknown"
}

// Key names an object: its namespace (empty for cluster-scoped objects)
// and name.
type Key struct {
	Namespace, Name string
}

// String is "namespace/name", or "name".
func (k Key) String() string {
	if k.Namespace == "" {
		return k.Name
	}
	return k.Namespace + "/" + k.Name
}

// Event is one event of a Resource's stream. Object is nil for Sync.
type Event[T runtime.Object] struct {
	Kind   EventKind
	Key    Key
	Object T
}

// keyOf returns the key of an informer object (or a deletion tombstone).
func keyOf(obj any) Key {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		ns, name, _ := cache.SplitMetaNamespaceKey(t.Key)
		return Key{Namespace: ns, Name: name}
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		// Read its metadata once (GetNamespace and GetName each walk
		// the object): every agent keys every CiliumEndpoint.
		md, _ := u.Object["metadata"].(map[string]any)
		ns, _ := md["namespace"].(string)
		name, _ := md["name"].(string)
		return Key{Namespace: ns, Name: name}
	}
	if m, ok := obj.(metav1.Object); ok { // without building "ns/name"
		return Key{Namespace: m.GetNamespace(), Name: m.GetName()}
	}
	key, _ := cache.MetaNamespaceKeyFunc(obj)
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	return Key{Namespace: ns, Name: name}
}

// unwrapTombstone returns the object of a deletion tombstone.
func unwrapTombstone(obj any) any {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return obj
}
