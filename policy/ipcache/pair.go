package ipcache

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"

	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// IPIdentityPair is an ipcache entry as Cilium writes it to the kvstore
// at layout.IPKey(address space, key): the JSON field names and
// shapes are Cilium's (IP and HostIP as strings, "" when absent; Mask as a
// base64 net.IPMask, null for a host entry). The key is the IP for a host
// entry ("10.0.1.5") and the prefix for a CIDR ("10.0.0.0/24").
type IPIdentityPair struct {
	IP                net.IP                   `json:"IP"`
	Mask              net.IPMask               `json:"Mask"`
	HostIP            net.IP                   `json:"HostIP"`
	ID                identity.NumericIdentity `json:"ID"`
	Key               uint8                    `json:"Key"`
	Metadata          string                   `json:"Metadata"`
	K8sNamespace      string                   `json:"K8sNamespace,omitempty"`
	K8sPodName        string                   `json:"K8sPodName,omitempty"`
	K8sServiceAccount string                   `json:"K8sServiceAccount,omitempty"`
	NamedPorts        []policyapi.NamedPort    `json:"NamedPorts,omitempty"`
}

// NewIPIdentityPair returns the pair of prefix: a host prefix (/32,
// /128) becomes a host entry without a mask.
func NewIPIdentityPair(prefix netip.Prefix, id identity.NumericIdentity, hostIP netip.Addr) *IPIdentityPair {
	addr := prefix.Addr().Unmap()
	p := &IPIdentityPair{IP: net.IP(addr.AsSlice()), ID: id}
	if prefix.Bits() != addr.BitLen() {
		p.IP = net.IP(prefix.Masked().Addr().Unmap().AsSlice())
		p.Mask = net.CIDRMask(prefix.Bits(), addr.BitLen())
	}
	if hostIP.IsValid() {
		p.HostIP = net.IP(hostIP.Unmap().AsSlice())
	}
	return p
}

// IsHost reports whether the pair is a single IP (no mask).
func (p *IPIdentityPair) IsHost() bool { return p.Mask == nil }

// GetKeyName returns the key below the address space: the IP of a host
// entry, the prefix of a CIDR entry.
func (p *IPIdentityPair) GetKeyName() string {
	if p.IsHost() {
		return p.IP.String()
	}
	ones, _ := p.Mask.Size()
	return p.IP.String() + "/" + strconv.Itoa(ones)
}

// Marshal returns the JSON value.
func (p *IPIdentityPair) Marshal() ([]byte, error) { return json.Marshal(p) }

// Prefix returns the pair's prefix (a /32 or /128 for a host entry).
func (p *IPIdentityPair) Prefix() (netip.Prefix, error) {
	addr, ok := netip.AddrFromSlice(p.IP)
	if !ok {
		return netip.Prefix{}, fmt.Errorf("field IP: %q is not an IP address", p.IP.String())
	}
	addr = addr.Unmap()
	if p.IsHost() {
		return netip.PrefixFrom(addr, addr.BitLen()), nil
	}
	ones, bits := p.Mask.Size()
	if bits == 0 || bits != addr.BitLen() {
		return netip.Prefix{}, fmt.Errorf("field Mask: %s is not a valid IPv%d mask", p.Mask.String(), ipVersion(addr))
	}
	pfx := netip.PrefixFrom(addr, ones)
	if pfx.Masked() != pfx {
		return netip.Prefix{}, fmt.Errorf("field IP: %s has bits set outside its mask /%d", addr, ones)
	}
	return pfx, nil
}

// HostAddr returns HostIP, invalid when absent.
func (p *IPIdentityPair) HostAddr() (netip.Addr, error) {
	if len(p.HostIP) == 0 {
		return netip.Addr{}, nil
	}
	addr, ok := netip.AddrFromSlice(p.HostIP)
	if !ok {
		return netip.Addr{}, fmt.Errorf("field HostIP: %q is not an IP address", p.HostIP.String())
	}
	return addr.Unmap(), nil
}

func ipVersion(a netip.Addr) int {
	if a.Is4() {
		return 4
	}
	return 6
}

// ErrNoIdentity is returned for a pair without an identity.
var ErrNoIdentity = errors.New("field ID: 0 is not an identity")

// DecodeIPIdentityPair reads a kvstore value whose key below the address
// space is name. It checks the value: a valid IP and mask, a key that
// matches them (as Cilium does) and a non-zero identity.
func DecodeIPIdentityPair(name string, value []byte) (*IPIdentityPair, error) {
	var p IPIdentityPair
	if err := json.Unmarshal(value, &p); err != nil {
		return nil, fmt.Errorf("decode IPIdentityPair: %w", err)
	}
	if len(p.IP) == 0 {
		return nil, errors.New("field IP: missing")
	}
	if _, err := p.Prefix(); err != nil {
		return nil, err
	}
	if _, err := p.HostAddr(); err != nil {
		return nil, err
	}
	if got := p.GetKeyName(); got != name {
		return nil, fmt.Errorf("field IP does not match the key: the key says %q, the value %q", name, got)
	}
	if p.ID == 0 {
		return nil, ErrNoIdentity
	}
	return &p, nil
}
