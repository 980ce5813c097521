package identitycache

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/kvstore/allocator"
	"github.com/apiary-net/apiary/kvstore/layout"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
)

// Errors of identity entries read from the kvstore and of label sets
// given to AllocateIdentity.
var (
	// ErrMalformed marks a kvstore entry that cannot be decoded (of the
	// watch store's kind store.ErrMalformed).
	ErrMalformed = store.KindError(store.ErrMalformed, "malformed identity")
	// ErrRefused marks a kvstore entry that decodes but is not this
	// cluster's: an id outside its range, or labels of another cluster
	// (of the watch store's kind store.ErrRefused).
	ErrRefused = store.KindError(store.ErrRefused, "refused identity")
	// ErrInvalidLabels is returned for label sets that cannot get an
	// identity (empty, or claiming another cluster).
	ErrInvalidLabels = errors.New("invalid identity labels")
	// ErrNotAllocated is returned by Release for an identity that holds
	// no reference here.
	ErrNotAllocated = errors.New("identity is not allocated here")
)

// isLabelSource reports whether s looks like a label source ("k8s",
// "cilium-generated"): [A-Za-z0-9][A-Za-z0-9._-]*.
func isLabelSource(s string) bool {
	for i := range len(s) {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return false
		}
	}
	return s != ""
}

// DecodeKVStoreIdentity decodes a master key of cluster c: id is the
// number in <base>/id/<id>, value the label list Cilium writes
// ("k8s:app=web;k8s:io.kubernetes.pod.namespace=default;"). Values that
// are no label list fail with ErrMalformed; ids outside this cluster's
// range and labels naming another cluster fail with ErrRefused.
func DecodeKVStoreIdentity(c cluster.Info, id uint64, value string) (*identity.Identity, error) {
	first, last := identity.ClusterRange(c)
	if id > math.MaxUint32 || !identity.InClusterRange(c, identity.NumericIdentity(id)) {
		return nil, fmt.Errorf("%w: id %d is outside the range %d..%d of cluster %q (cluster id %d)",
			ErrRefused, id, first, last, c.ClusterName, c.ClusterID)
	}
	lbls, err := labels.ParseSortedList(value)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	for _, l := range lbls {
		if err := checkLabel(l); err != nil {
			return nil, fmt.Errorf("%w: label list %q: %w", ErrMalformed, value, err)
		}
	}
	if l, ok := lbls.Get(labels.KeyPolicyCluster); ok && l.Value != c.ClusterName {
		return nil, fmt.Errorf("%w: id %d has the labels of cluster %q, this is cluster %q",
			ErrRefused, id, l.Value, c.ClusterName)
	}
	return &identity.Identity{ID: identity.NumericIdentity(id), Labels: lbls}, nil
}

// checkLabel rejects what no label holds: sources that are no token,
// and white space, quotes, braces or brackets (a JSON document, say).
func checkLabel(l labels.Label) error {
	if !isLabelSource(l.Source) {
		return fmt.Errorf("label source %q", l.Source)
	}
	for _, s := range []string{l.Key, l.Value} {
		if i := strings.IndexFunc(s, func(r rune) bool {
			return r <= ' ' || r == 0x7f || strings.ContainsRune(`"{}[]`, r)
		}); i >= 0 {
			return fmt.Errorf("label %q: unexpected %q", l.String(), s[i])
		}
	}
	return nil
}

// KVStoreEntry is one key of the kvstore with its value.
type KVStoreEntry struct {
	Key, Value string
}

// KVStoreEntries returns what a global identity looks like in the
// kvstore when the node with IP nodeIP uses it: the master key and this
// node's reference, with their values.
func KVStoreEntries(id identity.NumericIdentity, lbls labels.Labels, nodeIP string) (master, reference KVStoreEntry) {
	p := allocator.Paths{Base: layout.IdentitiesPrefix}
	key := kvstoreKey(lbls)
	return KVStoreEntry{Key: p.MasterKey(allocator.ID(id)), Value: key},
		KVStoreEntry{Key: p.ValueKey(key, nodeIP), Value: id.String()}
}

// kvstoreKey is the allocator key of a label set: its canonical list.
func kvstoreKey(lbls labels.Labels) string { return lbls.SortedList() }

// kvstoreKeyOf returns the canonical list of lbls, parsed from value:
// value itself when it is that list already (as writers put it), which
// saves building it again for each identity read.
func kvstoreKeyOf(lbls labels.Labels, value string) string {
	rest := value
	for _, l := range lbls {
		var ok bool
		for _, part := range [...]string{l.Source, ":", l.Key, "=", l.Value, ";"} {
			if rest, ok = strings.CutPrefix(rest, part); !ok {
				return kvstoreKey(lbls)
			}
		}
	}
	if rest != "" {
		return kvstoreKey(lbls)
	}
	return value
}
