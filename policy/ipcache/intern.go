package ipcache

import (
	"sync"

	"github.com/apiary-net/apiary/policy/policyapi"
)

// internLimit bounds each table of an interner: when full, it starts
// over, so that values of long-gone entries are not held forever.
const internLimit = 4096

// Interner hands out one copy of values that many entries share (a
// namespace, a set of named ports), so that a cluster's entries do not
// each hold their own: the kvstore watcher and the CiliumEndpoint
// watcher (k8scep) use one each. Interned NamedPorts are shared: like an
// Entry's, they must not be modified. It is safe for concurrent use.
type Interner struct {
	mu      sync.Mutex
	strings map[string]string
	ports   map[string][]policyapi.NamedPort
	buf     []byte
}

// NewInterner returns an empty Interner.
func NewInterner() *Interner {
	return &Interner{strings: map[string]string{}, ports: map[string][]policyapi.NamedPort{}}
}

// String returns the interned copy of s.
func (in *Interner) String(s string) string {
	if s == "" {
		return ""
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if v, ok := in.strings[s]; ok {
		return v
	}
	if len(in.strings) >= internLimit {
		clear(in.strings)
	}
	in.strings[s] = s
	return s
}

// NamedPorts returns the interned copy of ports.
func (in *Interner) NamedPorts(ports []policyapi.NamedPort) []policyapi.NamedPort {
	if len(ports) == 0 {
		return ports
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.buf = in.buf[:0]
	for _, p := range ports {
		in.buf = append(in.buf, p.Name...)
		in.buf = append(in.buf, 0, byte(p.Port>>8), byte(p.Port))
		in.buf = append(in.buf, p.Protocol...)
		in.buf = append(in.buf, 0)
	}
	if v, ok := in.ports[string(in.buf)]; ok {
		return v
	}
	if len(in.ports) >= internLimit {
		clear(in.ports)
	}
	in.ports[string(in.buf)] = ports
	return ports
}
