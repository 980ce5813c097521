package bpfapi

import (
	"log/slog"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/datapath/loader"
	"github.com/apiary-net/apiary/policy/identity"
)

// Cell serves GET /v1/bpf/{ipcache,policy/{endpoint-id},ct,metrics}. It
// needs the BPF loader (loadercell) and the identity cache
// (identitycell).
var Cell = cell.Module("bpf-api", "REST API over the datapath's BPF maps (apiary bpf ...)",
	cell.ProvidePrivate(newMaps),
	cell.Provide(newIPCacheHandler, newPolicyHandler, newCTHandler, newMetricsHandler),
)

// maps opens the pinned maps for a request.
type maps struct {
	log  *slog.Logger
	root string
	ids  identity.Allocator
}

type mapsParams struct {
	cell.In

	Log        *slog.Logger
	Loader     *loader.Loader
	Identities identity.Allocator
}

func newMaps(p mapsParams) *maps {
	return &maps{log: p.Log, root: p.Loader.Root(), ids: p.Identities}
}
