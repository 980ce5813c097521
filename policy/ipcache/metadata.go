package ipcache

import (
	"cmp"
	"net/netip"
	"slices"

	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/source"
)

// owner is one resource of one source.
type owner struct {
	source   source.Source
	resource ResourceID
}

// compareOwners sorts the highest source first, then by resource id, so
// that ties between resources of one source are broken the same way on
// every agent.
func compareOwners(a, b owner) int {
	if c := source.Compare(a.source, b.source); c != 0 {
		return c
	}
	return cmp.Compare(a.resource, b.resource)
}

// contribution is what one owner says about a prefix.
type contribution struct {
	owner owner
	md    Metadata
}

// prefixMeta are the contributions of one prefix, sorted with
// compareOwners. Most prefixes have one or two, so a slice beats a map.
type prefixMeta []contribution

// upsert replaces or inserts the contribution of o.
func (pm prefixMeta) upsert(o owner, md Metadata) prefixMeta {
	i, found := slices.BinarySearchFunc(pm, o, func(c contribution, o owner) int { return compareOwners(c.owner, o) })
	if found {
		pm[i].md = md
		return pm
	}
	return slices.Insert(pm, i, contribution{owner: o, md: md})
}

// remove drops the contribution of o and reports whether there was one.
func (pm prefixMeta) remove(o owner) (prefixMeta, bool) {
	i, found := slices.BinarySearchFunc(pm, o, func(c contribution, o owner) int { return compareOwners(c.owner, o) })
	if !found {
		return pm, false
	}
	return slices.Delete(pm, i, i+1), true
}

// merged is what the contributions of a prefix say together, before
// labels are resolved to an identity.
type merged struct {
	entry Entry
	// labels are resolved when entry.Identity is zero.
	labels labels.Labels
}

// merge combines the contributions: the source is the highest one; the
// identity comes from the highest contribution that has an identity or
// labels (an explicit identity as is, labels merged with the labels of
// every other contribution); the tunnel peer, key, pod and named ports
// come from the highest contribution that sets them. It reports false when
// nothing gives the prefix an identity.
func (pm prefixMeta) merge() (merged, bool) {
	if len(pm) == 0 {
		return merged{}, false
	}
	m := merged{entry: Entry{Source: pm[0].owner.source}}
	decided := false
	for i := range pm {
		md := &pm[i].md
		if !decided && (md.Identity != 0 || len(md.Labels) > 0) {
			decided = true
			if md.Identity != 0 {
				m.entry.Identity = md.Identity
			} else {
				m.labels = pm.mergedLabels()
			}
		}
		e := &m.entry
		if !e.TunnelPeer.IsValid() && md.TunnelPeer.IsValid() {
			e.TunnelPeer = md.TunnelPeer
		}
		if e.EncryptKey == 0 {
			e.EncryptKey = md.EncryptKey
		}
		if e.K8sNamespace == "" && e.K8sPodName == "" {
			e.K8sNamespace, e.K8sPodName, e.K8sServiceAccount = md.K8sNamespace, md.K8sPodName, md.K8sServiceAccount
		}
		if e.NamedPorts == nil && len(md.NamedPorts) > 0 {
			e.NamedPorts = md.NamedPorts
		}
	}
	return m, decided
}

// mergedLabels is the union of every contribution's labels; for a key
// given twice, the higher contribution's label wins.
func (pm prefixMeta) mergedLabels() labels.Labels {
	var only labels.Labels
	n := 0
	for i := range pm {
		if len(pm[i].md.Labels) > 0 {
			only = pm[i].md.Labels
			n++
		}
	}
	if n <= 1 {
		return only // the common case: nothing to merge, nothing to copy
	}
	var all []labels.Label
	for i := len(pm) - 1; i >= 0; i-- { // lowest first: FromSlice keeps the last
		all = append(all, pm[i].md.Labels...)
	}
	return labels.FromSlice(all)
}

// sameEntry reports whether two resolved entries are equal.
func sameEntry(a, b *Entry) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Prefix == b.Prefix && a.Identity == b.Identity && a.Source == b.Source &&
		a.TunnelPeer == b.TunnelPeer && a.EncryptKey == b.EncryptKey &&
		a.K8sNamespace == b.K8sNamespace && a.K8sPodName == b.K8sPodName &&
		slices.Equal(a.NamedPorts, b.NamedPorts)
}

// Reserved labels the resolution looks for.
var (
	labelHost          = reservedLabel(identity.ReservedHost)
	labelRemoteNode    = reservedLabel(identity.ReservedRemoteNode)
	labelKubeAPIServer = reservedLabel(identity.ReservedKubeAPIServer)
	labelHealth        = reservedLabel(identity.ReservedHealth)
	labelIngress       = reservedLabel(identity.ReservedIngress)
	labelWorld         = reservedLabel(identity.ReservedWorld)
)

func reservedLabel(id identity.NumericIdentity) labels.Label {
	return labels.New(labels.SourceReserved, id.ReservedName(), "")
}

// has reports whether lbls hold exactly the label l (source and key).
func has(lbls labels.Labels, l labels.Label) bool {
	got, ok := lbls.Get(l.Key)
	return ok && got.Source == l.Source
}

// reservedFor returns the reserved identity labels stand for: node labels
// win over everything else (a prefix that is both a node and in a world
// CIDR is the node), then kube-apiserver, health and ingress; world alone
// on 0.0.0.0/0 or ::/0 is the world identity of that family (world-ipv4,
// world-ipv6), the identity the datapath gives an ipcache miss and the
// only one a /0 CIDR selector of that family selects.
func reservedFor(prefix netip.Prefix, lbls labels.Labels) (identity.NumericIdentity, bool) {
	switch {
	case has(lbls, labelHost):
		return identity.ReservedHost, true
	case has(lbls, labelRemoteNode) && has(lbls, labelKubeAPIServer):
		return identity.ReservedKubeAPIServer, true
	case has(lbls, labelRemoteNode):
		return identity.ReservedRemoteNode, true
	case has(lbls, labelKubeAPIServer):
		return identity.ReservedKubeAPIServer, true
	case has(lbls, labelHealth):
		return identity.ReservedHealth, true
	case has(lbls, labelIngress):
		return identity.ReservedIngress, true
	case prefix.Bits() == 0 && len(lbls) == 1 && has(lbls, labelWorld):
		if prefix.Addr().Is6() {
			return identity.ReservedWorldIPv6, true
		}
		return identity.ReservedWorldIPv4, true
	}
	return 0, false
}

// isCIDROnly reports whether lbls ask for a CIDR identity: only cidr
// labels and reserved:world.
func isCIDROnly(lbls labels.Labels) bool {
	if len(lbls) == 1 && has(lbls, labelWorld) {
		return true
	}
	return identity.IsCIDRLabels(lbls)
}
