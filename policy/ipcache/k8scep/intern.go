package k8scep

import "github.com/apiary-net/apiary/policy/policyapi"

// internLimit bounds the interned port lists: when full, the table
// starts over, so that lists of long-gone endpoints are not held.
const internLimit = 4096

// portsInterner hands out one copy of each list of named ports: the
// pods of a deployment all name the same ports, and each node holds
// every pod's in its ipcache. Lists handed out are shared and must not
// be modified (as the ipcache's entries' must not). Only the watcher's
// goroutine uses it.
type portsInterner struct {
	lists map[string][]policyapi.NamedPort
	buf   []byte
}

func (in *portsInterner) intern(ports []policyapi.NamedPort) []policyapi.NamedPort {
	if len(ports) == 0 {
		return ports
	}
	in.buf = in.buf[:0]
	for _, p := range ports {
		in.buf = append(in.buf, p.Name...)
		in.buf = append(in.buf, 0, byte(p.Port>>8), byte(p.Port))
		in.buf = append(in.buf, p.Protocol...)
		in.buf = append(in.buf, 0)
	}
	if v, ok := in.lists[string(in.buf)]; ok {
		return v
	}
	if in.lists == nil || len(in.lists) >= internLimit {
		in.lists = map[string][]policyapi.NamedPort{}
	}
	in.lists[string(in.buf)] = ports
	return ports
}
