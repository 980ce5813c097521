package datapath

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
)

// PolicyMapWriter writes endpoints' map states (policy.MapState) to
// their BPF policy maps.
type PolicyMapWriter interface {
	// SyncPolicyMap makes the endpoint's policy map hold exactly desired, writing
	// only the difference with what it holds; it creates the map when
	// the endpoint has none. A map state with more keys than the map
	// holds is refused with a *PolicyMapFullError and the map is left as
	// it was.
	SyncPolicyMap(id EndpointID, desired policy.MapState) (added, removed int, err error)
	// ApplyPolicyMapChanges writes incremental changes (identity churn) without a full
	// Sync; a result that would not fit is refused as in SyncPolicyMap.
	ApplyPolicyMapChanges(id EndpointID, changes policy.MapChanges) error
	// DeletePolicyMap removes the endpoint's policy map; none is not an error.
	DeletePolicyMap(id EndpointID) error
}

// PolicyMapFullError says that a map state does not fit the endpoint's
// policy map (--bpf-policy-map-max).
type PolicyMapFullError struct {
	ID   EndpointID
	Keys int
	Max  int
}

// Error implements error.
func (e *PolicyMapFullError) Error() string {
	return fmt.Sprintf("policy map of endpoint %d: %d keys do not fit (--bpf-policy-map-max is %d)", e.ID, e.Keys, e.Max)
}

// ErrPolicyMapFull matches every *PolicyMapFullError with errors.Is.
var ErrPolicyMapFull = errors.New("policy map full")

// Is makes errors.Is(err, ErrPolicyMapFull) true.
func (e *PolicyMapFullError) Is(target error) bool { return target == ErrPolicyMapFull }

// IPCacheMapEntry is one entry of the BPF ipcache map: a prefix and the
// identity of its addresses, with the node (tunnel peer) that hosts them
// when they are remote. The map (datapath/maps/ipcachemap) writes and
// dumps this type itself.
type IPCacheMapEntry struct {
	Prefix   netip.Prefix
	Identity identity.NumericIdentity
	// TunnelPeer is the node hosting a remote prefix (invalid: none).
	TunnelPeer netip.Addr
	// EncryptKey is the IPsec key index (0: none).
	EncryptKey uint8
}

// IPCacheMapChange is one change of the BPF ipcache map: Entry upserted,
// or its Prefix deleted when Delete is set.
type IPCacheMapChange struct {
	Entry  IPCacheMapEntry
	Delete bool
}

// IPCacheMapWriter writes the ipcache to the BPF ipcache map.
type IPCacheMapWriter interface {
	// ApplyIPCache writes a batch of changes.
	ApplyIPCache(changes []IPCacheMapChange) error
	// ReconcileIPCache makes the map hold exactly entries: the full
	// reconciliation after the initial sync, which removes what a
	// previous run left behind.
	ReconcileIPCache(entries []IPCacheMapEntry) (added, removed int, err error)
}
