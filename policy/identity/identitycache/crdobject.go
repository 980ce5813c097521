package identitycache

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/kvstore/allocator"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
)

// The fields of a CiliumIdentity that Cilium defines
// (pkg/k8s/apis/cilium.io/v2 CiliumIdentity, pkg/k8s/identitybackend).
const (
	// crdSecurityLabels is the field of the identity's labels,
	// "source:key" -> value.
	crdSecurityLabels = "security-labels"
	// crdNamespaceLabel is the one metadata label Cilium sets: the
	// pod namespace of the identity, for `kubectl get ciliumid -l`.
	crdNamespaceLabel = "io.kubernetes.pod.namespace"
	// HeartbeatAnnotation marks an identity the garbage collector is
	// about to delete (its value is when it was marked, RFC 3339); an
	// agent that uses the identity removes it.
	HeartbeatAnnotation = "io.cilium.heartbeat"
)

// crdEntry is a CiliumIdentity as the CRD allocator's cache keeps it.
type crdEntry struct {
	id       allocator.ID
	key      string // the canonical label list
	identity *identity.Identity
	created  time.Time
	// rv is the object's resource version as a number (the order of
	// writes on one API server), uid and resourceVersion as written.
	rv              uint64
	uid             string
	resourceVersion string
	marked          bool
}

// olderThan orders duplicate identities of one label set: the first
// created wins (creation time, then resource version, then id), so that
// every agent picks the same one, and a later creation always loses.
func (e *crdEntry) olderThan(o *crdEntry) bool {
	if !e.created.Equal(o.created) {
		return e.created.Before(o.created)
	}
	if e.rv != o.rv {
		return e.rv < o.rv
	}
	return e.id < o.id
}

// NewCiliumIdentity returns the CiliumIdentity of id with labels lbls, as
// Cilium writes it: metadata.name is the id, security-labels maps
// "source:key" to value, and the pod-namespace label is the one metadata
// label.
func NewCiliumIdentity(id identity.NumericIdentity, lbls labels.Labels) *unstructured.Unstructured {
	sec := make(map[string]any, len(lbls))
	for _, l := range lbls {
		sec[l.Source+":"+l.Key] = l.Value
	}
	meta := map[string]any{"name": id.String()}
	if l, ok := lbls.Get(labels.KeyPodNamespace); ok && l.Source == labels.SourceK8s {
		meta["labels"] = map[string]any{crdNamespaceLabel: l.Value}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cilium.io/v2", "kind": "CiliumIdentity",
		"metadata": meta, crdSecurityLabels: sec,
	}}
}

// DecodeCiliumIdentity decodes a CiliumIdentity of cluster c: its name
// must be an id of the cluster's range, its security-labels a map of
// "source:key" to string values, and labels naming a cluster must name
// c. Errors are of the kinds of DecodeKVStoreIdentity (ErrMalformed,
// ErrRefused) and name the field.
func DecodeCiliumIdentity(c cluster.Info, obj *unstructured.Unstructured) (*identity.Identity, error) {
	name := obj.GetName()
	id, err := strconv.ParseUint(name, 10, 64)
	if err != nil || id > math.MaxUint32 {
		return nil, fmt.Errorf("%w: CiliumIdentity %q: metadata.name is not a numeric identity", ErrMalformed, name)
	}
	raw, ok := obj.Object[crdSecurityLabels].(map[string]any)
	if !ok || len(raw) == 0 {
		return nil, fmt.Errorf("%w: CiliumIdentity %s: field %s: missing or not a map", ErrMalformed, name, crdSecurityLabels)
	}
	ls := make([]labels.Label, 0, len(raw))
	for k, v := range raw {
		s, isString := v.(string)
		source, key, hasSource := strings.Cut(k, ":")
		if !isString || !hasSource || key == "" {
			return nil, fmt.Errorf("%w: CiliumIdentity %s: field %s: %q is not \"source:key\" with a string value",
				ErrMalformed, name, crdSecurityLabels, k)
		}
		ls = append(ls, labels.New(source, key, s))
	}
	ident, err := DecodeKVStoreIdentity(c, id, labels.FromSlice(ls).SortedList())
	if err != nil {
		return nil, fmt.Errorf("CiliumIdentity %s: field %s: %w", name, crdSecurityLabels, err)
	}
	return ident, nil
}

// newCRDEntry decodes obj into a cache entry.
func newCRDEntry(c cluster.Info, obj *unstructured.Unstructured) (*crdEntry, error) {
	ident, err := DecodeCiliumIdentity(c, obj)
	if err != nil {
		return nil, err
	}
	rv, _ := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	_, marked := obj.GetAnnotations()[HeartbeatAnnotation]
	return &crdEntry{id: allocator.ID(ident.ID), key: kvstoreKey(ident.Labels), identity: ident,
		created: obj.GetCreationTimestamp().Time, rv: rv, uid: string(obj.GetUID()),
		resourceVersion: obj.GetResourceVersion(), marked: marked}, nil
}
