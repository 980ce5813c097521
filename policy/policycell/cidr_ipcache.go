package policycell

import (
	"fmt"
	"net/netip"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/source"
)

// cidrResource owns the ipcache entries of the prefixes policies name.
const cidrResource ipcache.ResourceID = "policy/cidr"

type cidrIPCacheParams struct {
	cell.In

	Importer *importer
	IPCache  ipcache.IPCache `optional:"true"`
}

// useIPCacheForCIDRs gives the importer the ipcache, if the agent has one:
// each prefix a policy names is then an ipcache entry with its CIDR
// identity (source generated), so addresses in it that are not
// endpoints get that identity in the datapath, as the engine assumes.
// An Invoke rather than a constructor argument: the ipcache's listeners
// include the importer's named-port listener.
func useIPCacheForCIDRs(p cidrIPCacheParams) error {
	if p.IPCache == nil {
		return nil
	}
	l := p.Importer
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ipc = p.IPCache
	for prefix, id := range l.cidrs {
		if err := l.publishCIDRLocked(prefix, id); err != nil {
			return err
		}
	}
	return nil
}

// publishCIDRLocked makes prefix an ipcache entry with identity id.
func (l *importer) publishCIDRLocked(prefix netip.Prefix, id *identity.Identity) error {
	if l.ipc == nil {
		return nil
	}
	if _, err := l.ipc.UpsertMetadata(prefix, source.Generated, cidrResource, ipcache.Metadata{Identity: id.ID}); err != nil {
		return fmt.Errorf("ipcache entry of %s: %w", prefix, err)
	}
	return nil
}

// withdrawCIDRLocked removes prefix's ipcache entry.
func (l *importer) withdrawCIDRLocked(prefix netip.Prefix) error {
	if l.ipc == nil {
		return nil
	}
	if _, err := l.ipc.RemoveMetadata(prefix, source.Generated, cidrResource); err != nil {
		return fmt.Errorf("remove ipcache entry of %s: %w", prefix, err)
	}
	return nil
}
