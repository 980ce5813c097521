package datapath

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	"github.com/apiary-net/apiary/policy/identity"
)

// EndpointID is an endpoint's id on its node (Cilium's endpoint id:
// 1..65535).
type EndpointID uint16

// HostIfName returns the name of the host side of the endpoint's veth,
// "lxc<id>" (at most 8 characters, under the kernel's 15).
func (id EndpointID) HostIfName() string { return fmt.Sprintf("lxc%d", id) }

// EndpointLinkSpec is what EndpointLinks.CreateEndpointLink plumbs: a veth pair
// whose host side is HostIfName and whose peer, moved into the network
// namespace at NetNSPath, is renamed IfName and given the endpoint's
// addresses, a route to the gateway and a default route through it.
type EndpointLinkSpec struct {
	ID EndpointID
	// NetNSPath is the path of the endpoint's network namespace
	// (/proc/<pid>/ns/net, /var/run/netns/<name>).
	NetNSPath string
	// IfName is the name of the interface inside the namespace ("eth0").
	IfName string
	// MTU of both sides; 0 is 1500.
	MTU int
	// IPv4 and IPv6 are the endpoint's addresses (either may be invalid:
	// none), configured as /32 and /128.
	IPv4 netip.Addr
	IPv6 netip.Addr
	// GatewayIPv4 and GatewayIPv6 are the next hops of the endpoint's
	// default routes (the node's router addresses); each has a static
	// neighbour entry with the host side's MAC address.
	GatewayIPv4 netip.Addr
	GatewayIPv6 netip.Addr
}

// HostIfName returns the name of the host side of the veth.
func (s EndpointLinkSpec) HostIfName() string { return s.ID.HostIfName() }

// EndpointLink is a plumbed endpoint's host side.
type EndpointLink struct {
	// IfName and IfIndex are the host side's name and index.
	IfName  string
	IfIndex int
	// MAC is the host side's MAC address; ContainerMAC the peer's.
	MAC          string
	ContainerMAC string
}

// EndpointLinks plumbs endpoints into the node's network.
type EndpointLinks interface {
	// CreateEndpointLink makes the veth pair, configures the namespace side and
	// routes the endpoint's addresses to the host side. On an error
	// nothing of it is left behind.
	CreateEndpointLink(ctx context.Context, spec EndpointLinkSpec) (EndpointLink, error)
	// DeleteEndpointLink removes what CreateEndpointLink made; what is already gone is not an
	// error.
	DeleteEndpointLink(ctx context.Context, spec EndpointLinkSpec) error
	// LookupEndpointLink returns the host side of endpoint id, or ErrLinkNotFound.
	LookupEndpointLink(ctx context.Context, id EndpointID) (EndpointLink, error)
}

// ErrLinkNotFound says that an endpoint's host-side interface does not
// exist.
var ErrLinkNotFound = errors.New("endpoint link not found")

// EndpointSpec is what Loader.Attach loads for an endpoint: the
// programs of its host-side interface, with its constants. The BPF
// loader (datapath/loader) takes it as it is.
type EndpointSpec struct {
	ID EndpointID
	// IfIndex and IfName are the host side of the endpoint's veth.
	IfIndex int
	IfName  string
	// Identity is the endpoint's security identity.
	Identity identity.NumericIdentity
	IPv4     netip.Addr
	IPv6     netip.Addr
	// IngressEnforcement and EgressEnforcement say whether policy is
	// enforced in each direction (false: everything is allowed).
	IngressEnforcement bool
	EgressEnforcement  bool
	// PolicyAudit (--policy-audit-mode): the enforced directions look
	// policy up and report its verdicts, but let denied flows through.
	PolicyAudit bool
}

// Loader loads and attaches the endpoint programs.
type Loader interface {
	// Attach loads the endpoint's programs with its constants and
	// attaches them to its host-side interface, replacing the programs
	// attached before atomically.
	Attach(ctx context.Context, spec EndpointSpec) error
	// Detach removes the endpoint's programs and their pins; an
	// endpoint without programs is not an error.
	Detach(ctx context.Context, id EndpointID) error
	// Restore checks, after an agent restart, that the endpoint's
	// programs are still attached to the interface ifindex (from their
	// pinned links); ErrNotAttached when they are not.
	Restore(ctx context.Context, id EndpointID, ifindex int) error
}

// ErrNotAttached says that an endpoint has no programs attached.
var ErrNotAttached = errors.New("endpoint programs not attached")

// InvalidSpecError says that a field of an EndpointLinkSpec is wrong
// (a path that is no network namespace, the node's own namespace): the
// request behind it is bad input, not a datapath failure.
type InvalidSpecError struct {
	// Field is the spec's field ("NetNSPath").
	Field string
	Err   error
}

// Error implements error.
func (e *InvalidSpecError) Error() string { return "field " + e.Field + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *InvalidSpecError) Unwrap() error { return e.Err }
