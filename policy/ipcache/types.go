package ipcache

import (
	"context"
	"net/netip"

	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
	"github.com/apiary-net/apiary/policy/source"
)

// Revision numbers the changes of the ipcache. Every accepted call that
// changes metadata returns a new revision; the cache's revision is the
// latest one whose changes every listener has seen.
type Revision uint64

// ResourceID names the owner of a piece of metadata, by convention
// "<kind>/<name>": "node/default/node-1", "kvstore/10.0.1.5",
// "endpoint/10.0.1.5".
type ResourceID string

// Metadata is what one resource says about a prefix. Zero fields say
// nothing.
type Metadata struct {
	// Labels are resolved to an identity, merged with the labels of the
	// other resources of the prefix.
	Labels labels.Labels
	// Identity is an explicit identity (a kvstore entry, a local
	// endpoint); it takes precedence over labels of the same or a lower
	// source.
	Identity identity.NumericIdentity
	// TunnelPeer is the host IP of the node the prefix lives on.
	TunnelPeer netip.Addr
	// EncryptKey is the index of the encryption key (0: none).
	EncryptKey uint8
	// K8sNamespace and K8sPodName name the pod behind the prefix.
	K8sNamespace string
	K8sPodName   string
	// K8sServiceAccount is the pod's service account.
	K8sServiceAccount string
	// NamedPorts are the pod's named ports.
	NamedPorts []policyapi.NamedPort
}

// IsZero reports whether md says nothing.
func (md *Metadata) IsZero() bool {
	return len(md.Labels) == 0 && md.Identity == 0 && !md.TunnelPeer.IsValid() && md.EncryptKey == 0 &&
		md.K8sNamespace == "" && md.K8sPodName == "" && md.K8sServiceAccount == "" && len(md.NamedPorts) == 0
}

// Entry is the resolved state of one prefix. Entries handed out are
// copies; their NamedPorts must not be modified.
type Entry struct {
	Prefix            netip.Prefix
	Identity          identity.NumericIdentity
	Source            source.Source
	TunnelPeer        netip.Addr
	EncryptKey        uint8
	K8sNamespace      string
	K8sPodName        string
	K8sServiceAccount string
	NamedPorts        []policyapi.NamedPort
}

// Change is one prefix changing: Old is nil when it was added, New is nil
// when it was deleted.
type Change struct {
	Prefix netip.Prefix
	Old    *Entry
	New    *Entry
}

// Listener is told about every change of the cache, in order and in
// batches, from one goroutine. It must not block for long and must not
// wait for a revision of the cache.
type Listener interface {
	OnIPCacheChanged(rev Revision, changes []Change)
}

// ListenerFunc adapts a function to Listener.
type ListenerFunc func(rev Revision, changes []Change)

// OnIPCacheChanged calls f.
func (f ListenerFunc) OnIPCacheChanged(rev Revision, changes []Change) { f(rev, changes) }

// Update is one change of the metadata layer, for Apply.
type Update struct {
	Prefix   netip.Prefix
	Source   source.Source
	Resource ResourceID
	// Metadata replaces what the resource said about the prefix before.
	Metadata Metadata
	// Remove withdraws what the resource, from Source, said about the
	// prefix; Metadata is ignored.
	Remove bool
}

// LocalEndpoint is an endpoint of this node as the ipcache and the other
// agents (through the kvstore) know it.
type LocalEndpoint struct {
	IP       netip.Addr
	Identity identity.NumericIdentity
	// EndpointID is the endpoint's id on this node; it makes the Metadata
	// of the kvstore entry ("cilium-global:<cluster>:<node>:<id>").
	EndpointID   uint16
	EncryptKey   uint8
	K8sNamespace string
	K8sPodName   string
	// K8sServiceAccount is the pod's service account, published as
	// Cilium's IPIdentityPair K8sServiceAccount.
	K8sServiceAccount string
	// NamedPorts are the pod's named ports (container ports with a
	// name), published so that other agents and clusters resolve egress
	// rules with named ports to this pod's numbers.
	NamedPorts []policyapi.NamedPort
}

// LocalNode is the node this agent runs on, as the ipcache needs it: its
// IP is the tunnel peer of the entries it publishes, and entries that
// carry it are this node's own. The cell fills it from the local-node
// store.
type LocalNode struct {
	Name string
	IP   netip.Addr
}

// IPCache is the prefix-to-identity cache.
type IPCache interface {
	// UpsertMetadata records what resource, from src, says about prefix
	// (replacing what it said before) and returns the revision of the
	// change.
	UpsertMetadata(prefix netip.Prefix, src source.Source, resource ResourceID, md Metadata) (Revision, error)
	// RemoveMetadata withdraws what resource, from src, said about
	// prefix; what other resources and sources say stays.
	RemoveMetadata(prefix netip.Prefix, src source.Source, resource ResourceID) (Revision, error)
	// Apply makes several changes under one revision. It checks them all
	// first: on an error nothing is applied. It keeps no reference to
	// the slice: callers may reuse it.
	Apply(updates ...Update) (Revision, error)

	// UpsertLocalEndpoint puts an endpoint of this node in the cache
	// (source local) and, with a kvstore, publishes it to the cluster.
	UpsertLocalEndpoint(ep LocalEndpoint) (Revision, error)
	// DeleteLocalEndpoint removes a local endpoint and its kvstore entry.
	DeleteLocalEndpoint(ip netip.Addr) (Revision, error)

	// Lookup returns the entry of exactly prefix.
	Lookup(prefix netip.Prefix) (Entry, bool)
	// LookupByIP returns the entry of the longest prefix holding addr.
	LookupByIP(addr netip.Addr) (Entry, bool)
	// Entries returns every entry, sorted by prefix.
	Entries() []Entry
	// EntriesAfter returns, sorted by prefix, at most limit entries that
	// come after the prefix after (from the first when after is the zero
	// Prefix) and lie within the prefix within (all when it is the zero
	// Prefix), and whether more such entries follow. It copies only the
	// entries it returns, so a caller that pages through the cache holds
	// a page at a time.
	EntriesAfter(within, after netip.Prefix, limit int) (page []Entry, more bool)
	// Len returns the number of entries.
	Len() int

	// Revision returns the latest revision whose changes every listener
	// has seen.
	Revision() Revision
	// WaitForRevision waits until rev is the cache's revision or later.
	WaitForRevision(ctx context.Context, rev Revision) error
	// WaitForInitialSync waits until the cluster's entries in the
	// kvstore were listed once and applied (at once without a kvstore):
	// from then on, a prefix missing from the cache is really gone.
	WaitForInitialSync(ctx context.Context) error
}
