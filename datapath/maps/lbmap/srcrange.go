package lbmap

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"

	"github.com/cilium/ebpf"
)

// Source ranges (loadBalancerSourceRanges): a frontend flagged
// FlagSourceRange admits clients from outside only from its prefixes,
// the entries (rev-NAT index, prefix) of lb4_source_range and
// lb6_source_range. The writer mirrors them by rev-NAT index in
// w.ranges (sorted lists), which is empty in a cluster without them:
// the other frontends pay one map length check per upsert.
//
// Order: a frontend's new prefixes are written before its master entry
// gains the flag or changes, the prefixes it drops are deleted after
// (a change admits the old and the new prefixes for that moment, never
// neither); a deleted frontend loses its prefixes after its master
// entry.

// parseRanges validates svc's source ranges into d.ranges (sorted, each
// once), reusing its room; "" or what is wrong with the first bad one.
func (d *desired) parseRanges(rs []netip.Prefix) string {
	d.ranges = d.ranges[:0]
	for i, p := range rs {
		switch {
		case !p.IsValid():
			return fmt.Sprintf("sourceRanges[%d]: %v is not a prefix", i, p)
		case p.Addr().Is4() != d.frontend.Addr.Is4() || p.Addr().Is4In6():
			return fmt.Sprintf("sourceRanges[%d]: %v is not of the frontend's address family", i, p)
		case p.Masked() != p:
			return fmt.Sprintf("sourceRanges[%d]: %v has bits set past its length (%v)", i, p, p.Masked())
		}
		d.ranges = append(d.ranges, p)
	}
	if !slices.IsSortedFunc(d.ranges, comparePrefix) {
		slices.SortFunc(d.ranges, comparePrefix)
	}
	d.ranges = slices.Compact(d.ranges)
	return ""
}

// comparePrefix is the order of a frontend's ranges: netip's (IPv4
// first, then by length, then by address), svcmanager's too.
var comparePrefix = netip.Prefix.Compare

// rangeKey returns the LPM key of prefix p of frontend rev.
func rangeKey(rev uint16, p netip.Prefix) any {
	if p.Addr().Is4() {
		return &SrcRange4Key{Prefixlen: uint32(32 + p.Bits()), RevNATIndex: rev, Address: p.Addr().As4()}
	}
	return &SrcRange6Key{Prefixlen: uint32(32 + p.Bits()), RevNATIndex: rev, Address: p.Addr().As16()}
}

func (m *Maps) ranges(v4 bool) *ebpf.Map {
	if v4 {
		return m.range4
	}
	return m.range6
}

// addRanges writes the prefixes of want that frontend rev's entries
// lack.
func (w *Writer) addRanges(rev uint16, want []netip.Prefix) error {
	if len(want) == 0 {
		return nil
	}
	one := uint8(1)
	for _, p := range want {
		have := w.ranges[rev]
		i, found := slices.BinarySearchFunc(have, p, comparePrefix)
		if found {
			continue
		}
		if err := w.m.ranges(p.Addr().Is4()).Update(rangeKey(rev, p), &one, ebpf.UpdateAny); err != nil {
			return fmt.Errorf("write source range %v: %w", p, err)
		}
		w.wrote++
		w.ranges[rev] = slices.Insert(have, i, p)
	}
	return nil
}

// dropRanges deletes frontend rev's entries that are not in want.
func (w *Writer) dropRanges(rev uint16, want []netip.Prefix) error {
	have := w.ranges[rev]
	if len(have) == 0 {
		return nil
	}
	var errs []error
	kept := have[:0]
	for _, p := range have {
		if _, found := slices.BinarySearchFunc(want, p, comparePrefix); found {
			kept = append(kept, p)
			continue
		}
		if err := w.del(w.m.ranges(p.Addr().Is4()), rangeKey(rev, p)); err != nil {
			errs = append(errs, fmt.Errorf("delete source range %v: %w", p, err))
			kept = append(kept, p)
		}
	}
	if len(kept) == 0 {
		delete(w.ranges, rev)
	} else {
		w.ranges[rev] = kept
	}
	return errors.Join(errs...)
}

// restoreRanges reads the source ranges into w.ranges.
func (w *Writer) restoreRanges() error {
	var err error
	w.ranges, err = w.m.SourceRanges()
	return err
}

// SourceRanges returns the source ranges of every frontend by rev-NAT
// index, sorted (w.ranges' form), for the writer's restore and `apiary
// bpf lb list`.
func (m *Maps) SourceRanges() (map[uint16][]netip.Prefix, error) {
	out := map[uint16][]netip.Prefix{}
	var (
		k4  SrcRange4Key
		k6  SrcRange6Key
		one uint8
	)
	it := m.range4.Iterate()
	for it.Next(&k4, &one) {
		out[k4.RevNATIndex] = append(out[k4.RevNATIndex], netip.PrefixFrom(netip.AddrFrom4(k4.Address), int(k4.Prefixlen)-32))
	}
	if err := it.Err(); err != nil {
		return out, fmt.Errorf("read %s: %w", SourceRange4Name, err)
	}
	it = m.range6.Iterate()
	for it.Next(&k6, &one) {
		out[k6.RevNATIndex] = append(out[k6.RevNATIndex], netip.PrefixFrom(netip.AddrFrom16(k6.Address), int(k6.Prefixlen)-32))
	}
	if err := it.Err(); err != nil {
		return out, fmt.Errorf("read %s: %w", SourceRange6Name, err)
	}
	for _, ps := range out {
		slices.SortFunc(ps, comparePrefix)
	}
	return out, nil
}
