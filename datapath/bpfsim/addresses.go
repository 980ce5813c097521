package bpfsim

import (
	"fmt"
	"net/netip"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/maps/ipcachemap"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/policyapi"
	"github.com/apiary-net/apiary/policy/simulate"
)

// Pools of synthetic addresses: given to a side of a query that has no
// address of the packet's family (see the package comment).
var (
	synthPool4 = netip.MustParsePrefix("100.64.0.0/10")
	synthPool6 = netip.MustParsePrefix("fd00:a9::/32")
)

// addressBook chooses the addresses of queries' packets and keeps the
// ipcache map in step with the synthetic ones it hands out.
type addressBook struct {
	ipcache *ipcachemap.Map
	// used are the addresses with a host prefix (/32, /128) in the
	// ipcache: a synthetic address must be none of them.
	used  map[netip.Addr]bool
	next  map[bool]netip.Addr // by "is IPv6": the next candidate
	synth map[synthKey]netip.Addr
}

// synthKey names a side that needs a synthetic address: an endpoint, or
// (ep nil) the identity of an address of the other family.
type synthKey struct {
	ep *simulate.EndpointModel
	id identity.NumericIdentity
	v6 bool
}

// newAddressBook writes prefixes into the ipcache map.
func newAddressBook(prefixes map[netip.Prefix]identity.NumericIdentity, m *ipcachemap.Map) (*addressBook, error) {
	b := &addressBook{
		ipcache: m, used: map[netip.Addr]bool{}, synth: map[synthKey]netip.Addr{},
		next: map[bool]netip.Addr{false: synthPool4.Addr().Next(), true: synthPool6.Addr().Next()},
	}
	entries := make([]datapath.IPCacheMapEntry, 0, len(prefixes))
	for p, id := range prefixes {
		entries = append(entries, datapath.IPCacheMapEntry{Prefix: p, Identity: id})
		if p.IsSingleIP() {
			b.used[p.Addr()] = true
		}
	}
	if err := m.ApplyBatch(entries, nil); err != nil {
		return nil, fmt.Errorf("fill ipcache map: %w", err)
	}
	return b, nil
}

// family returns whether q's packet is IPv6: that of its protocol for
// ICMP and ICMPv6, else the family of an address the
// query names (the source's first), else one both endpoints have (IPv4
// first), else the source's, else the destination's, else IPv4.
func family(q simulate.QueryModel) bool {
	if f, ok := q.Protocol.ICMPFamily(); ok { // the protocol has one family
		return f == policyapi.ICMPv6
	}
	for _, s := range []simulate.SideModel{q.From, q.To} {
		if s.IP.IsValid() {
			return s.IP.Is6()
		}
	}
	has := func(s simulate.SideModel, v6 bool) bool {
		for _, ip := range s.Endpoint.IPs {
			if ip.Is6() == v6 {
				return true
			}
		}
		return false
	}
	for _, v6 := range []bool{false, true} {
		if has(q.From, v6) && has(q.To, v6) {
			return v6
		}
	}
	for _, s := range []simulate.SideModel{q.From, q.To} {
		if len(s.Endpoint.IPs) > 0 {
			return s.Endpoint.IPs[0].Is6()
		}
	}
	return false
}

// address returns the address of side s in a packet of family v6: the
// address the query names, else the endpoint's first of the family, else
// a synthetic one mapped to the side's identity.
func (b *addressBook) address(s simulate.SideModel, v6 bool) (netip.Addr, error) {
	if s.IP.IsValid() && s.IP.Is6() == v6 {
		return s.IP, nil
	}
	if s.Endpoint != nil {
		for _, ip := range s.Endpoint.IPs {
			if ip.Is6() == v6 {
				return ip, nil
			}
		}
	}
	key := synthKey{ep: s.Endpoint, v6: v6}
	if s.Endpoint == nil {
		key.id = s.Identity
	}
	if ip, ok := b.synth[key]; ok {
		return ip, nil
	}
	ip, err := b.allocate(v6)
	if err != nil {
		return netip.Addr{}, err
	}
	if err := b.ipcache.Upsert(netip.PrefixFrom(ip, ip.BitLen()), s.Identity); err != nil {
		return netip.Addr{}, err
	}
	b.synth[key] = ip
	return ip, nil
}

// allocate returns the next pool address the scenario does not use.
func (b *addressBook) allocate(v6 bool) (netip.Addr, error) {
	pool := synthPool4
	if v6 {
		pool = synthPool6
	}
	for ip := b.next[v6]; pool.Contains(ip); ip = ip.Next() {
		if !b.used[ip] {
			b.used[ip] = true
			b.next[v6] = ip.Next()
			return ip, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("allocate a synthetic address: %v is exhausted", pool)
}
