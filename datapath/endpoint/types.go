package endpoint

import (
	"net/netip"
	"time"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// State is the lifecycle state of an endpoint, with Cilium's names.
type State string

// The states of an endpoint.
const (
	// StateWaitingForIdentity: plumbed, its identity is being allocated.
	StateWaitingForIdentity State = "waiting-for-identity"
	// StateRegenerating: its policy is being computed and written.
	StateRegenerating State = "regenerating"
	// StateReady: its policy is in the datapath.
	StateReady State = "ready"
	// StateNotReady: its last regeneration failed; the datapath keeps
	// its last good policy.
	StateNotReady State = "not-ready"
	// StateDisconnecting: it is being deleted.
	StateDisconnecting State = "disconnecting"

	// stateCreating marks, in a state file read back at restore, a
	// creation that never finished: the agent stopped in the middle.
	stateCreating State = "creating"
)

// Endpoint is a snapshot of an endpoint.
type Endpoint struct {
	ID datapath.EndpointID
	// NetNSPath and IfName are the endpoint's namespace and interface.
	NetNSPath string
	IfName    string
	// Labels are the labels the identity was allocated for.
	Labels labels.Labels
	IPv4   netip.Addr
	IPv6   netip.Addr
	// NamedPorts are the endpoint's named ports.
	NamedPorts []policyapi.NamedPort
	// ContainerID and Pod say whose endpoint it is (empty when the
	// creator did not say); with Kubernetes, the labels come from Pod.
	ContainerID string
	Pod         PodName
	// Identity is the numeric security identity (0 while waiting).
	Identity identity.NumericIdentity
	// HostIfName, HostIfIndex and MAC are the host side of the veth;
	// ContainerMAC is the endpoint's.
	HostIfName   string
	HostIfIndex  int
	MAC          string
	ContainerMAC string

	// The fields below are not persisted: they describe the running
	// agent's view of the endpoint.

	State State
	// IngressEnforcement and EgressEnforcement say whether policy is
	// enforced in each direction (a rule selects the endpoint).
	IngressEnforcement bool
	EgressEnforcement  bool
	// PolicyRevision is the repository revision of the policy in the
	// datapath; PolicyKeys the size of its map state.
	PolicyRevision uint64
	PolicyKeys     int
	// Error is why the last regeneration failed (empty: it did not).
	Error string
	// Created is when the endpoint was created (or restored).
	Created time.Time
}

// PodName names a Kubernetes pod.
type PodName struct {
	Namespace, Name string
}

// IsZero reports whether no pod is named.
func (p PodName) IsZero() bool { return p.Name == "" }

// String is "namespace/name".
func (p PodName) String() string { return p.Namespace + "/" + p.Name }
