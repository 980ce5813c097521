package ciliumpolicy

import (
	"fmt"
	"log/slog"
	"sync"

	"github.com/cilium/cilium/pkg/endpoint/regeneration"
	"github.com/cilium/cilium/pkg/identity"
	"github.com/cilium/cilium/pkg/identity/identitymanager"
	"github.com/cilium/cilium/pkg/option"
	"github.com/cilium/cilium/pkg/policy"
	"github.com/cilium/cilium/pkg/policy/api"
	ciliumtypes "github.com/cilium/cilium/pkg/types"
	"github.com/cilium/cilium/pkg/u8proto"
)

// Engine is a Cilium policy repository with its selector caches and the
// named ports of the cluster's pods, as one agent holds them.
type Engine struct {
	// Log is where Cilium logs go; nowhere by default.
	Log *slog.Logger
	// Cluster is the local cluster's name.
	Cluster string
	// Repo is the repository.
	Repo *policy.Repository

	namedPorts namedPortMap
}

// namedPortMap is what types.NewNamedPortMultiMap returns: the ipcache's
// map of pods' named ports by identity, which Cilium resolves egress
// named ports with.
type namedPortMap interface {
	ciliumtypes.NamedPortMultiMap
	Update(nid identity.NumericIdentity, old, new ciliumtypes.NamedPortMap) bool
}

var initOnce sync.Once
var initCluster string

// Init sets Cilium's process-wide state for an agent of the cluster
// named cluster, as the agent's policy cell does before any policy is
// parsed: the entity selectors and the default enforcement mode. New
// calls it; a later call with another cluster name panics.
func Init(cluster string) {
	initOnce.Do(func() {
		initCluster = cluster
		api.InitEntities(cluster)
		policy.SetPolicyEnabled(option.DefaultEnforcement)
	})
	if cluster != initCluster {
		panic(fmt.Sprintf("ciliumpolicy: cluster %q after %q: Cilium's entities are process-wide", cluster, initCluster))
	}
}

// New returns an engine for the cluster named cluster (see Init), with
// the reserved identities known and no policy.
func New(cluster string) *Engine {
	Init(cluster)
	log := slog.New(slog.DiscardHandler)
	e := &Engine{
		Log:        log,
		Cluster:    cluster,
		namedPorts: ciliumtypes.NewNamedPortMultiMap(),
	}
	e.Repo = policy.NewPolicyRepository(log, identity.ListReservedIdentities(), nil, nil,
		identitymanager.NewIDManager(log), nil)
	e.Repo.SetNamedPortsGetter(e)
	return e
}

// GetNamedPorts returns the cluster's named ports (policy.NamedPortsGetter).
func (e *Engine) GetNamedPorts() ciliumtypes.NamedPortMultiMap { return e.namedPorts }

// SetNamedPorts records the named ports of one pod with identity id, as
// the ipcache does for every pod it learns of; pods with the same
// identity add up.
func (e *Engine) SetNamedPorts(id identity.NumericIdentity, ports ciliumtypes.NamedPortMap) {
	e.namedPorts.Update(id, nil, ports)
}

// UpdateIdentities adds and deletes identities in the peer selector
// cache, as the agent's identity updater does, and waits until every
// resolved policy has been told. It returns whether an identity changed
// labels (a full regeneration would follow in the agent).
func (e *Engine) UpdateIdentities(added, deleted identity.IdentityMap) (mutated bool) {
	var wg sync.WaitGroup
	mutated = e.UpdateIdentitiesAsync(added, deleted, &wg)
	wg.Wait()
	return mutated
}

// UpdateIdentitiesAsync is UpdateIdentities without the wait: the
// selector cache queues its notifications on wg, as in the agent, which
// waits for them asynchronously.
func (e *Engine) UpdateIdentitiesAsync(added, deleted identity.IdentityMap, wg *sync.WaitGroup) (mutated bool) {
	return e.Repo.GetSelectorCache().UpdateIdentities(added, deleted, wg)
}

// AddLocalIdentity puts the identity of a local endpoint into the
// subject selector cache, which the repository matches rule subjects
// against; the agent does it before computing the identity's policy.
func (e *Engine) AddLocalIdentity(id *identity.Identity) {
	e.Repo.UpdateIdentities(identity.IdentityMap{id.ID: id.LabelArray}, nil)
}

// Endpoint is a local endpoint: the PolicyOwner Cilium distills a policy
// for, with the endpoint's own named ports (for ingress named ports).
type Endpoint struct {
	ID    uint64
	Ports ciliumtypes.NamedPortMap
}

var _ policy.PolicyOwner = (*Endpoint)(nil)

// GetID returns the endpoint id.
func (ep *Endpoint) GetID() uint64 { return ep.ID }

// GetIngressNamedPort returns the endpoint's port named name for proto,
// 0 when it declares none.
func (ep *Endpoint) GetIngressNamedPort(name string, proto u8proto.U8proto) uint16 {
	port, _ := ep.Ports.GetNamedPort(name, proto)
	return port
}

// PolicyDebug drops policy debug messages.
func (ep *Endpoint) PolicyDebug(string, ...any) {}

// IsHost reports false: the endpoints here are pods.
func (ep *Endpoint) IsHost() bool { return false }

// PreviousMapStateSizes returns no sizes: there is no previous map state
// to size the new one after.
func (ep *Endpoint) PreviousMapStateSizes() policy.MapStateSizes { return policy.MapStateSizes{} }

// RegenerateIfAlive does nothing; the caller regenerates.
func (ep *Endpoint) RegenerateIfAlive(*regeneration.ExternalRegenerationMetadata) <-chan bool {
	ch := make(chan bool)
	close(ch)
	return ch
}

// Resolve computes the selector policy of a local endpoint identity at
// the repository's current revision (attached to the selector cache;
// Detach it when done).
func (e *Engine) Resolve(id *identity.Identity) (policy.SelectorPolicy, error) {
	sp, _, err := e.Repo.ComputeSelectorPolicy(id)
	if err != nil {
		return nil, fmt.Errorf("compute selector policy of identity %d: %w", id.ID, err)
	}
	return sp, nil
}

// Distill distills sp into ep's map state and marks it realized, as an
// endpoint regeneration does; the policy follows identity updates until
// Detach.
func (e *Engine) Distill(sp policy.SelectorPolicy, ep *Endpoint) *policy.EndpointPolicy {
	epp := sp.DistillPolicy(e.Log, ep, nil)
	epp.Ready()
	return epp
}

// Allowed reports whether epp allows traffic with peer on port/proto in
// the direction ingress (else egress), as the datapath decides
// (EndpointPolicy.Lookup: no covering entry is a deny).
func Allowed(epp *policy.EndpointPolicy, ingress bool, peer identity.NumericIdentity, proto u8proto.U8proto, port uint16) bool {
	key := policy.EgressKey()
	if ingress {
		key = policy.IngressKey()
	}
	entry, _, found := epp.Lookup(key.WithIdentity(peer).WithPortProto(proto, port))
	return found && entry.IsAllow()
}
