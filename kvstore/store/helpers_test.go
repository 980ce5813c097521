package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apiary-net/apiary/kvstore/store"
)

// node is a JSON value like the ones agents share.
type node struct {
	Name string `json:"name"`
	IP   string `json:"ip"`
}

func (n *node) GetKeyName() string       { return n.Name }
func (n *node) Marshal() ([]byte, error) { return json.Marshal(n) }

var nodeFactory = store.KeyFactoryFunc(func(name string, value []byte) (store.Key, error) {
	var n node
	if err := json.Unmarshal(value, &n); err != nil {
		return nil, err
	}
	if n.Name != name {
		return nil, fmt.Errorf("name %q does not match key %q", n.Name, name)
	}
	return &n, nil
})

// recorder is an Observer that logs "update a=1.2.3.4" / "delete a".
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) OnUpdate(k store.Key) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, "update "+k.GetKeyName()+"="+k.(*node).IP)
}

func (r *recorder) OnDelete(k store.Key) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, "delete "+k.GetKeyName())
}

func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// waitEvents waits until the recorded events, sorted within the first n
// (order inside a list is not defined), equal want.
func (r *recorder) waitEvents(t *testing.T, want ...string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		got := r.list()
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("events:\n got %s\nwant %s", strings.Join(got, " | "), strings.Join(want, " | "))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *recorder) reset() {
	r.mu.Lock()
	r.events = nil
	r.mu.Unlock()
}

func jsonNode(name, ip string) string {
	data, _ := json.Marshal(node{Name: name, IP: ip})
	return string(data)
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
