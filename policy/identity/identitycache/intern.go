package identitycache

import (
	"hash/maphash"
	"strings"
	"sync"

	"github.com/apiary-net/apiary/policy/labels"
)

// internLimit bounds the interner's table: when full, it starts over,
// so that strings of long-gone identities are not held forever.
const internLimit = 8192

// remoteLabels makes the labels of remote identities compact: their
// strings are copies of their own, interned (sources, keys and the
// values many identities share: namespaces, cluster names, service
// accounts), rather than parts of the kvstore value that would keep the
// whole value alive; and it hashes label lists for the remote cache's
// index, which then keeps no copy of them.
type remoteLabels struct {
	seed    maphash.Seed
	mu      sync.Mutex
	strings map[string]string
}

func newRemoteLabels() *remoteLabels {
	return &remoteLabels{seed: maphash.MakeSeed(), strings: map[string]string{}}
}

// intern replaces the strings of lbls with interned copies, in place.
func (r *remoteLabels) intern(lbls labels.Labels) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range lbls {
		l := &lbls[i]
		l.Source, l.Key, l.Value = r.stringLocked(l.Source), r.stringLocked(l.Key), r.stringLocked(l.Value)
	}
}

func (r *remoteLabels) stringLocked(s string) string {
	if v, ok := r.strings[s]; ok {
		return v
	}
	if len(r.strings) >= internLimit {
		clear(r.strings)
	}
	s = strings.Clone(s)
	r.strings[s] = s
	return s
}

// sum returns the hash of a label list's canonical form (kvstoreKey).
func (r *remoteLabels) sum(key string) uint64 { return maphash.String(r.seed, key) }
