package node

import (
	"net/netip"
	"slices"

	"github.com/apiary-net/apiary/policy/source"
)

// AddressType is the kind of a node address, with Kubernetes' and
// Cilium's names.
type AddressType string

// The address types.
const (
	NodeHostName         AddressType = "Hostname"
	NodeExternalIP       AddressType = "ExternalIP"
	NodeInternalIP       AddressType = "InternalIP"
	NodeExternalDNS      AddressType = "ExternalDNS"
	NodeInternalDNS      AddressType = "InternalDNS"
	NodeCiliumInternalIP AddressType = "CiliumInternalIP"
)

// Address is one IP address of a node.
type Address struct {
	Type AddressType
	IP   netip.Addr
}

// Identity names a node across clusters.
type Identity struct {
	Cluster string
	Name    string
}

// String returns "<cluster>/<name>", the node's key below
// layout.NodesPrefix.
func (id Identity) String() string { return id.Cluster + "/" + id.Name }

// Node is a node of a cluster, with the fields of Cilium's node type
// (pkg/node/types); its JSON (json.go) is Cilium's kvstore value. Zero
// values mean absent.
type Node struct {
	Name    string
	Cluster string
	// IPAddresses are the node's addresses (InternalIP first by convention).
	IPAddresses []Address
	// IPv4AllocCIDR and IPv6AllocCIDR are the pod CIDRs endpoints get
	// their IPs from; the secondary ones are further pools.
	IPv4AllocCIDR           netip.Prefix
	IPv4SecondaryAllocCIDRs []netip.Prefix
	IPv6AllocCIDR           netip.Prefix
	IPv6SecondaryAllocCIDRs []netip.Prefix
	// IPv4HealthIP and IPv6HealthIP are the addresses of the node's
	// health endpoint.
	IPv4HealthIP netip.Addr
	IPv6HealthIP netip.Addr
	// IPv4IngressIP and IPv6IngressIP are the addresses of the node's
	// ingress listener.
	IPv4IngressIP netip.Addr
	IPv6IngressIP netip.Addr
	ClusterID     uint32
	// Source is where this version of the node came from.
	Source source.Source
	// EncryptionKey is the index of the node's encryption key (0: none).
	EncryptionKey   uint8
	Labels          map[string]string
	Annotations     map[string]string
	NodeIdentity    uint32
	WireguardPubKey string
	BootID          string
}

// Identity returns the node's cluster and name.
func (n Node) Identity() Identity { return Identity{Cluster: n.Cluster, Name: n.Name} }

// GetKeyName returns "<cluster>/<name>", the key below
// layout.NodesPrefix (store.Key).
func (n Node) GetKeyName() string { return n.Identity().String() }

// Marshal returns the kvstore value (store.LocalKey).
func (n *Node) Marshal() ([]byte, error) { return n.MarshalJSON() }

// PrimaryIP returns the node's main address of one family (v6 false:
// IPv4) as Cilium picks it: an InternalIP, else an ExternalIP, else any
// address but the CiliumInternalIP.
func (n Node) PrimaryIP(v6 bool) netip.Addr {
	var external, other netip.Addr
	for _, a := range n.IPAddresses {
		if !a.IP.IsValid() || a.IP.Is6() != v6 {
			continue
		}
		switch a.Type {
		case NodeInternalIP:
			return a.IP
		case NodeExternalIP:
			if !external.IsValid() {
				external = a.IP
			}
		case NodeCiliumInternalIP:
		default:
			if !other.IsValid() {
				other = a.IP
			}
		}
	}
	if external.IsValid() {
		return external
	}
	return other
}

// TunnelIP returns the address other nodes tunnel to: the primary IPv4
// address, else the primary IPv6 one.
func (n Node) TunnelIP() netip.Addr {
	if ip := n.PrimaryIP(false); ip.IsValid() {
		return ip
	}
	return n.PrimaryIP(true)
}

// Clone returns a copy that shares nothing with n.
func (n Node) Clone() Node {
	n.IPAddresses = slices.Clone(n.IPAddresses)
	n.IPv4SecondaryAllocCIDRs = slices.Clone(n.IPv4SecondaryAllocCIDRs)
	n.IPv6SecondaryAllocCIDRs = slices.Clone(n.IPv6SecondaryAllocCIDRs)
	n.Labels = cloneMap(n.Labels)
	n.Annotations = cloneMap(n.Annotations)
	return n
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
