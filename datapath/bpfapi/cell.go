package bpfapi

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/datapath/loader"
	"github.com/apiary-net/apiary/policy/identity"
)

// Cell serves GET /v1/bpf/{ipcache,policy/{endpoint-id},ct,metrics,lb}. It
// needs the identity cache (identitycell) and the BPF loader
// (loadercell); in an agent without the loader (another datapath) they
// answer 503 ErrNoDatapath.
var Cell = cell.Module("bpf-api", "REST API over the datapath's BPF maps (apiary bpf ...)",
	cell.ProvidePrivate(newMaps),
	cell.Provide(newIPCacheHandler, newPolicyHandler, newCTHandler, newMetricsHandler, newLBHandler),
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
	Loader     *loader.Loader `optional:"true"`
	Identities identity.Allocator
}

func newMaps(p mapsParams) *maps {
	m := &maps{log: p.Log, ids: p.Identities}
	if p.Loader != nil {
		m.root = p.Loader.Root()
	}
	return m
}

// ErrNoDatapath is the answer (503) in an agent without the BPF loader.
var ErrNoDatapath = errors.New("this agent has no BPF datapath (no bpf-loader cell): there are no BPF maps to show")

// available answers 503 and returns false when there are no maps.
func (m *maps) available(w http.ResponseWriter) bool {
	if m.root == "" {
		api.WriteError(w, http.StatusServiceUnavailable, ErrNoDatapath)
		return false
	}
	return true
}
