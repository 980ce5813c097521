package policycell

import (
	"fmt"

	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// newPeerPortsListener makes the ipcache the repository's source of peer
// named ports: every ipcache entry (a pod of any node or meshed cluster)
// contributes its named ports to its identity. A change updates the map
// states of the endpoints whose egress rules name ports of those
// identities (Repository.PeerNamedPortsChanged) and requests a
// regeneration so the datapath gets the delta. Without the ipcache cell
// nothing constructs the listener, and egress named ports open nothing.
func newPeerPortsListener(l *importer) ipcache.ListenerOut {
	table := policy.NewPeerPortTable()
	l.repo.SetPeerNamedPorts(table)
	return ipcache.ListenerOut{Listener: ipcache.ListenerFunc(func(_ ipcache.Revision, changes []ipcache.Change) {
		ids := peerPortChanges(table, changes)
		if len(ids) == 0 {
			return
		}
		l.repo.PeerNamedPortsChanged(ids...)
		l.regen.Request(fmt.Sprintf("named ports of %d identities changed", len(ids)))
	})}
}

// peerPortChanges applies ipcache changes to table and returns the
// identities whose named ports changed.
func peerPortChanges(table *policy.PeerPortTable, changes []ipcache.Change) []identity.NumericIdentity {
	seen := map[identity.NumericIdentity]bool{}
	var out []identity.NumericIdentity
	for _, ch := range changes {
		key := ch.Prefix.String()
		var ids []identity.NumericIdentity
		if ch.New == nil {
			ids = table.Delete(key)
		} else {
			ids = table.Upsert(key, ch.New.Identity, engineNamedPorts(ch.New.NamedPorts))
		}
		for _, id := range ids {
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	return out
}

// engineNamedPorts normalises the ipcache's named ports, which other
// agents (Cilium's too) publish: protocol upper case, TCP when empty, as
// for a Kubernetes container port.
func engineNamedPorts(ports []policyapi.NamedPort) []policyapi.NamedPort {
	out := make([]policyapi.NamedPort, 0, len(ports))
	for _, p := range ports {
		out = append(out, p.Normalized())
	}
	return out
}
