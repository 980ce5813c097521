package node

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/apiary-net/apiary/policy/source"
)

// wireNode is Cilium's JSON of a node: field names without tags, IPs as
// strings ("" when absent), CIDRs as net.IPNet objects
// ({"IP":"10.0.1.0","Mask":"////AA=="}, null when absent), in Cilium's
// field order.
type wireNode struct {
	Name                    string
	Cluster                 string
	IPAddresses             []wireAddress
	IPv4AllocCIDR           *wireCIDR
	IPv4SecondaryAllocCIDRs []*wireCIDR
	IPv6AllocCIDR           *wireCIDR
	IPv6SecondaryAllocCIDRs []*wireCIDR
	IPv4HealthIP            net.IP
	IPv6HealthIP            net.IP
	IPv4IngressIP           net.IP
	IPv6IngressIP           net.IP
	ClusterID               uint32
	Source                  source.Source
	EncryptionKey           uint8
	Labels                  map[string]string
	Annotations             map[string]string
	NodeIdentity            uint32
	WireguardPubKey         string
	BootID                  string
}

type wireAddress struct {
	Type AddressType
	IP   net.IP
}

// wireCIDR has the JSON of a net.IPNet. Decoding also accepts the string
// form "10.0.1.0/24".
type wireCIDR struct {
	IP   net.IP
	Mask net.IPMask
}

// UnmarshalJSON reads {"IP":..,"Mask":..} or "10.0.1.0/24".
func (c *wireCIDR) UnmarshalJSON(data []byte) error {
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		_, ipnet, err := net.ParseCIDR(s)
		if err != nil {
			return err
		}
		c.IP, c.Mask = ipnet.IP, ipnet.Mask
		return nil
	}
	type plain wireCIDR
	return json.Unmarshal(data, (*plain)(c))
}

// MarshalJSON returns Cilium's JSON of the node.
func (n *Node) MarshalJSON() ([]byte, error) {
	w := wireNode{
		Name: n.Name, Cluster: n.Cluster,
		IPv4AllocCIDR: toWireCIDR(n.IPv4AllocCIDR), IPv6AllocCIDR: toWireCIDR(n.IPv6AllocCIDR),
		IPv4SecondaryAllocCIDRs: toWireCIDRs(n.IPv4SecondaryAllocCIDRs),
		IPv6SecondaryAllocCIDRs: toWireCIDRs(n.IPv6SecondaryAllocCIDRs),
		IPv4HealthIP:            toNetIP(n.IPv4HealthIP), IPv6HealthIP: toNetIP(n.IPv6HealthIP),
		IPv4IngressIP: toNetIP(n.IPv4IngressIP), IPv6IngressIP: toNetIP(n.IPv6IngressIP),
		ClusterID: n.ClusterID, Source: n.Source, EncryptionKey: n.EncryptionKey,
		Labels: n.Labels, Annotations: n.Annotations, NodeIdentity: n.NodeIdentity,
		WireguardPubKey: n.WireguardPubKey, BootID: n.BootID,
	}
	if n.IPAddresses != nil {
		w.IPAddresses = make([]wireAddress, len(n.IPAddresses))
		for i, a := range n.IPAddresses {
			w.IPAddresses[i] = wireAddress{Type: a.Type, IP: toNetIP(a.IP)}
		}
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads Cilium's JSON of a node, checking every address
// and CIDR; errors name the field.
func (n *Node) UnmarshalJSON(data []byte) error {
	var w wireNode
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&w); err != nil {
		return fmt.Errorf("decode node: %w", err)
	}
	out := Node{
		Name: w.Name, Cluster: w.Cluster, ClusterID: w.ClusterID, Source: w.Source,
		EncryptionKey: w.EncryptionKey, Labels: w.Labels, Annotations: w.Annotations,
		NodeIdentity: w.NodeIdentity, WireguardPubKey: w.WireguardPubKey, BootID: w.BootID,
	}
	var errs []error
	for i, a := range w.IPAddresses {
		ip, err := fromNetIP(a.IP)
		if err == nil && !ip.IsValid() {
			err = errors.New("missing")
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("field IPAddresses[%d].IP: %w", i, err))
			continue
		}
		out.IPAddresses = append(out.IPAddresses, Address{Type: a.Type, IP: ip})
	}
	out.IPv4AllocCIDR = fromWireCIDR(w.IPv4AllocCIDR, "IPv4AllocCIDR", false, &errs)
	out.IPv6AllocCIDR = fromWireCIDR(w.IPv6AllocCIDR, "IPv6AllocCIDR", true, &errs)
	out.IPv4SecondaryAllocCIDRs = fromWireCIDRs(w.IPv4SecondaryAllocCIDRs, "IPv4SecondaryAllocCIDRs", false, &errs)
	out.IPv6SecondaryAllocCIDRs = fromWireCIDRs(w.IPv6SecondaryAllocCIDRs, "IPv6SecondaryAllocCIDRs", true, &errs)
	out.IPv4HealthIP = fromFamilyIP(w.IPv4HealthIP, "IPv4HealthIP", false, &errs)
	out.IPv6HealthIP = fromFamilyIP(w.IPv6HealthIP, "IPv6HealthIP", true, &errs)
	out.IPv4IngressIP = fromFamilyIP(w.IPv4IngressIP, "IPv4IngressIP", false, &errs)
	out.IPv6IngressIP = fromFamilyIP(w.IPv6IngressIP, "IPv6IngressIP", true, &errs)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("decode node %q: %w", w.Name, err)
	}
	*n = out
	return nil
}

func toNetIP(a netip.Addr) net.IP {
	if !a.IsValid() {
		return nil
	}
	return net.IP(a.Unmap().AsSlice())
}

func fromNetIP(ip net.IP) (netip.Addr, error) {
	if len(ip) == 0 {
		return netip.Addr{}, nil
	}
	a, ok := netip.AddrFromSlice(ip)
	if !ok {
		return netip.Addr{}, fmt.Errorf("%q is not an IP address", ip.String())
	}
	return a.Unmap(), nil
}

// fromFamilyIP reads an IP of one family; errors go to errs.
func fromFamilyIP(ip net.IP, field string, v6 bool, errs *[]error) netip.Addr {
	a, err := fromNetIP(ip)
	if err == nil && a.IsValid() && a.Is6() != v6 {
		err = fmt.Errorf("%s is not an IPv%d address", a, family(v6))
	}
	if err != nil {
		*errs = append(*errs, fmt.Errorf("field %s: %w", field, err))
		return netip.Addr{}
	}
	return a
}

func family(v6 bool) int {
	if v6 {
		return 6
	}
	return 4
}

func toWireCIDR(p netip.Prefix) *wireCIDR {
	if !p.IsValid() {
		return nil
	}
	addr := p.Masked().Addr().Unmap()
	return &wireCIDR{IP: net.IP(addr.AsSlice()), Mask: net.CIDRMask(p.Bits(), addr.BitLen())}
}

func toWireCIDRs(ps []netip.Prefix) []*wireCIDR {
	if ps == nil {
		return nil
	}
	out := make([]*wireCIDR, len(ps))
	for i, p := range ps {
		out[i] = toWireCIDR(p)
	}
	return out
}

// fromWireCIDR reads a CIDR of one family; errors go to errs.
func fromWireCIDR(c *wireCIDR, field string, v6 bool, errs *[]error) netip.Prefix {
	if c == nil {
		return netip.Prefix{}
	}
	p, err := c.prefix()
	if err == nil && p.Addr().Is6() != v6 {
		err = fmt.Errorf("%s is not an IPv%d CIDR", p, family(v6))
	}
	if err != nil {
		*errs = append(*errs, fmt.Errorf("field %s: %w", field, err))
		return netip.Prefix{}
	}
	return p
}

func fromWireCIDRs(cs []*wireCIDR, field string, v6 bool, errs *[]error) []netip.Prefix {
	if cs == nil {
		return nil
	}
	out := make([]netip.Prefix, 0, len(cs))
	for i, c := range cs {
		if p := fromWireCIDR(c, fmt.Sprintf("%s[%d]", field, i), v6, errs); p.IsValid() {
			out = append(out, p)
		}
	}
	return out
}

func (c *wireCIDR) prefix() (netip.Prefix, error) {
	addr, err := fromNetIP(c.IP)
	if err != nil {
		return netip.Prefix{}, err
	}
	if !addr.IsValid() {
		return netip.Prefix{}, errors.New("IP missing")
	}
	ones, bits := c.Mask.Size()
	if bits == 0 || bits != addr.BitLen() {
		return netip.Prefix{}, fmt.Errorf("mask %s is not a valid IPv%d mask", c.Mask.String(), family(addr.Is6()))
	}
	return netip.PrefixFrom(addr, ones).Masked(), nil
}
