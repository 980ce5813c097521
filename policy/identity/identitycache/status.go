package identitycache

import (
	"fmt"

	"github.com/apiary-net/apiary/kvstore/allocator"

	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/policy/identity"
)

// maxStatusDetails bounds the skipped kvstore entries listed.
const maxStatusDetails = 10

// Usable reports whether global identities can be used: standalone, or
// the kvstore cache has listed them once.
func (m *Manager) Usable() bool {
	if m.kv == nil {
		return true
	}
	a := m.kv.started()
	return a != nil && a.Synced()
}

// StatusReport says how many identities there are and where global ones
// come from: "12 global, 3 local, kvstore" or "... standalone
// (local-only allocator)". Skipped kvstore entries make it a Warning that
// lists them.
func (m *Manager) StatusReport() status.Report {
	first, last := identity.ClusterRange(m.cfg)
	details := []string{fmt.Sprintf("cluster %q (id %d), global ids %d..%d", m.cfg.ClusterName, m.cfg.ClusterID, first, last)}
	local := m.local.len()
	if m.kv == nil {
		return status.Report{State: status.Ok, Details: details,
			Message: fmt.Sprintf("%d global, %d local, standalone (local-only allocator)", m.standalone.len(), local)}
	}
	a := m.kv.started()
	if a == nil || !a.Synced() {
		from := "the kvstore"
		if m.mode == CRD {
			from = "the Kubernetes API server (CiliumIdentity)"
		}
		return status.Report{State: status.Warning, Details: details,
			Message: "waiting for the first list of identities from " + from}
	}
	known, used := m.kv.counts()
	var invalid []string
	var msg, what string
	switch b := a.(type) {
	case *allocator.Allocator[*identity.Identity]:
		details = append(details, fmt.Sprintf("%d used on this node, referenced as %s", used, b.Suffix()))
		msg, what = fmt.Sprintf("%d global, %d local, kvstore", known, local), "kvstore entries"
		for _, e := range b.Invalid() {
			invalid = append(invalid, fmt.Sprintf("%s: %v", e.Key, e.Err))
		}
	case *CRDAllocator:
		details = append(details, fmt.Sprintf("%d used on this node", used))
		msg, what = fmt.Sprintf("%d global, %d local, crd (CiliumIdentity)", known, local), "CiliumIdentities"
		invalid = b.Invalid()
	}
	if len(invalid) == 0 {
		return status.Report{State: status.Ok, Message: msg, Details: details}
	}
	for i, e := range invalid {
		if i == maxStatusDetails {
			details = append(details, fmt.Sprintf("... and %d more", len(invalid)-i))
			break
		}
		details = append(details, "skipped "+e)
	}
	return status.Report{State: status.Warning, Details: details,
		Message: fmt.Sprintf("%s, %d %s skipped", msg, len(invalid), what)}
}
