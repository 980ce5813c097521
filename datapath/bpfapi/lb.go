package bpfapi

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/maps/lbmap"
)

const lbKind = "bpf-lb"

// newLBHandler serves GET /v1/bpf/lb: the frontends of the BPF
// load-balancing maps with their backend slots, sorted by family,
// address, port and protocol, a page at a time.
func newLBHandler(m *maps) api.HandlerOut {
	return api.NewHandlerOut(http.MethodGet, "/v1/bpf/lb", func(w http.ResponseWriter, r *http.Request) {
		if !m.available(w) {
			return
		}
		q, err := api.ParseListQuery(r, lbKind)
		if err != nil {
			api.WriteError(w, http.StatusBadRequest, err)
			return
		}
		items, err := m.lb()
		if err != nil {
			api.WriteError(w, http.StatusInternalServerError, err)
			return
		}
		out, cont := page(lbKind, items, q)
		api.WriteList(w, api.ListPage[models.BPFLBService]{ItemsName: "items", Items: slices.Values(out), Continue: cont})
	})
}

// lb reads the load-balancing maps.
func (m *maps) lb() ([]keyed[models.BPFLBService], error) {
	lm, err := lbmap.OpenMaps(m.log, m.root)
	if err != nil {
		return nil, fmt.Errorf("open BPF load-balancing maps: %w", err)
	}
	defer lm.Close()
	svcs, err := lm.Dump()
	if err != nil {
		return nil, err
	}
	out := make([]keyed[models.BPFLBService], 0, len(svcs))
	for _, s := range svcs {
		fe := s.Frontend
		fam := 6
		if fe.Addr.Is4() {
			fam = 4
		}
		key := fmt.Sprintf("%d%x%04x%02x", fam, fe.Addr.As16(), fe.Port, fe.Proto)
		out = append(out, keyed[models.BPFLBService]{key: key, item: lbModel(s)})
	}
	return out, nil
}

var backendStates = map[datapath.BackendState]string{
	datapath.BackendActive: "active", datapath.BackendTerminating: "terminating", datapath.BackendQuarantined: "quarantined",
}

func lbModel(s lbmap.Service) models.BPFLBService {
	out := models.BPFLBService{
		Frontend: s.Frontend.String(), RevNATIndex: s.RevNATIndex, Flags: LBFlagNames(s.Flags),
		AffinityTimeoutSeconds: s.AffinityTimeout, Count: s.Count, NoMaster: !s.Master,
		Backends: []models.BPFLBBackend{},
	}
	for _, p := range s.SourceRanges {
		out.SourceRanges = append(out.SourceRanges, p.String())
	}
	for _, sl := range s.Slots {
		b := models.BPFLBBackend{Slot: sl.Slot, BackendID: sl.BackendID}
		if sl.Backend.Addr.IsValid() {
			b.Address, b.State, b.ClusterID = sl.Backend.String(), backendStates[sl.State], sl.ClusterID
		}
		out.Backends = append(out.Backends, b)
	}
	return out
}

// LBFlagNames spells a frontend's flags as Cilium's ServiceFlags do:
// the type, then Local, sessionAffinity, sourceRange (source ranges
// apply), two-scopes (an internal-scope entry exists too), and
// non-routable for a ClusterIP.
func LBFlagNames(flags uint8) []string {
	var out []string
	switch {
	case flags&lbmap.FlagHostPort != 0:
		out = append(out, string(datapath.SVCTypeHostPort))
	case flags&lbmap.FlagNodePort != 0:
		out = append(out, string(datapath.SVCTypeNodePort))
	case flags&lbmap.FlagExternalIP != 0:
		out = append(out, string(datapath.SVCTypeExternalIP))
	case flags&lbmap.FlagLoadBalancer != 0:
		out = append(out, string(datapath.SVCTypeLoadBalancer))
	default:
		out = append(out, string(datapath.SVCTypeClusterIP))
	}
	if flags&lbmap.FlagLocal != 0 {
		out = append(out, "Local")
	}
	if flags&lbmap.FlagAffinity != 0 {
		out = append(out, "sessionAffinity")
	}
	if flags&lbmap.FlagSourceRange != 0 {
		out = append(out, "sourceRange")
	}
	if flags&lbmap.FlagTwoScopes != 0 {
		out = append(out, "two-scopes")
	}
	if out[0] == string(datapath.SVCTypeClusterIP) {
		out = append(out, "non-routable")
	}
	return out
}
