package node

import (
	"slices"
	"time"

	"github.com/apiary-net/apiary/kvstore/layout"
	"github.com/apiary-net/apiary/kvstore/store"
)

// RegistrationConflict is what this agent found when it wrote its node's
// kvstore key again after another writer had changed or deleted it: with
// another agent's node under this node's name, two agents were started
// with the same --node-name.
type RegistrationConflict struct {
	// Key is the node's kvstore key.
	Key string
	// OtherIP is the address of the node the other writer registered
	// ("" when it deleted the key); the value itself when that is no node.
	OtherIP string
	// Deleted says the key had been deleted (by someone, or with an
	// expired lease) rather than changed.
	Deleted bool
	// InARow counts the conflicts without a quiet period between them.
	InARow int
	// Time is when the last was found.
	Time time.Time
}

// registrationKey is the kvstore key of the local node.
func (k *kvSync) registrationKey() string { return layout.NodeKey(k.m.self.Cluster, k.m.self.Name) }

// registrationConflict returns the latest recent conflict on the local
// node's key.
func (k *kvSync) registrationConflict() (RegistrationConflict, bool) {
	conflicts := k.sync.Conflicts()
	i := slices.IndexFunc(conflicts, func(c store.Conflict) bool { return c.Key == k.registrationKey() })
	if i < 0 {
		return RegistrationConflict{}, false
	}
	return registrationConflictOf(conflicts[i]), true
}

func registrationConflictOf(c store.Conflict) RegistrationConflict {
	r := RegistrationConflict{Key: c.Key, Deleted: c.Deleted, InARow: c.InARow, Time: c.Time}
	if !c.Deleted {
		var n Node
		if err := n.UnmarshalJSON(c.Value); err == nil && n.TunnelIP().IsValid() {
			r.OtherIP = n.TunnelIP().String()
		} else {
			r.OtherIP = string(c.Value)
		}
	}
	return r
}

// onConflict logs another agent's claim of this node's name, naming the
// address it registered.
func (k *kvSync) onConflict(c store.Conflict) {
	if c.Key != k.registrationKey() || c.Deleted {
		return
	}
	r := registrationConflictOf(c)
	k.log.Warn("Another agent registers this node's name: two agents run with the same --node-name; writing ours again",
		"node", k.m.self.String(), "key", c.Key, "our-ip", k.m.LocalNode().TunnelIP(), "other-ip", r.OtherIP,
		"in-a-row", c.InARow, "next-write-after", c.NextRepair.Sub(c.Time))
}

// RegistrationConflict implements Manager.
func (m *NodeManager) RegistrationConflict() (RegistrationConflict, bool) {
	if m.kv == nil {
		return RegistrationConflict{}, false
	}
	return m.kv.registrationConflict()
}
