package bpfapi

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/datapath/maps/ctmap"
	"github.com/apiary-net/apiary/datapath/monitor"
)

const ctKind = "bpf-ct"

// newCTHandler serves GET /v1/bpf/ct: the conntrack entries, IPv4 then
// IPv6, sorted by source, destination, protocol and direction, a page at
// a time.
func newCTHandler(m *maps) api.HandlerOut {
	return api.NewHandlerOut(http.MethodGet, "/v1/bpf/ct", func(w http.ResponseWriter, r *http.Request) {
		if !m.available(w) {
			return
		}
		q, err := api.ParseListQuery(r, ctKind)
		if err != nil {
			api.WriteError(w, http.StatusBadRequest, err)
			return
		}
		items, err := m.ct()
		if err != nil {
			api.WriteError(w, http.StatusInternalServerError, err)
			return
		}
		out, cont := page(ctKind, items, q)
		api.WriteList(w, api.ListPage[models.BPFCTEntry]{ItemsName: "items", Items: slices.Values(out), Continue: cont})
	})
}

// ct reads both conntrack maps.
func (m *maps) ct() ([]keyed[models.BPFCTEntry], error) {
	cm, err := ctmap.Open(m.log, m.root)
	if err != nil {
		return nil, fmt.Errorf("open BPF conntrack maps: %w", err)
	}
	defer cm.Close()
	entries, err := cm.Dump()
	if err != nil {
		return nil, err
	}
	now := ctmap.Now()
	out := make([]keyed[models.BPFCTEntry], 0, len(entries))
	for _, e := range entries {
		out = append(out, keyed[models.BPFCTEntry]{key: ctKey(e.Tuple), item: ctModel(e, now)})
	}
	return out, nil
}

// ctKey orders tuples: family, source, destination, protocol, direction.
func ctKey(t ctmap.Tuple) string {
	fam := 6
	if t.Src.Addr().Is4() {
		fam = 4
	}
	return fmt.Sprintf("%d%x%04x%x%04x%02x%d", fam, t.Src.Addr().As16(), t.Src.Port(),
		t.Dst.Addr().As16(), t.Dst.Port(), uint8(t.Proto), uint8(t.Direction))
}

func ctModel(e ctmap.Entry, now uint64) models.BPFCTEntry {
	out := models.BPFCTEntry{
		Protocol: monitor.ProtoName(e.Tuple.Proto), Source: e.Tuple.Src.String(), Destination: e.Tuple.Dst.String(),
		Direction: e.Tuple.Direction.String(), EndpointID: e.Value.EndpointID, PeerIdentity: e.Value.PeerIdentity,
		ExpiresInSeconds: int64(time.Duration(int64(e.Value.Expires-now)) / time.Second),
		TCPFlags:         monitor.TCPFlagNames(e.Value.TCPFlags),
		PolicyRevision:   e.Value.PolicyRev,
		BackendID:        e.Value.BackendID, RevNATIndex: e.Value.RevNATIndex,
		TxPackets: e.Value.TxPackets, TxBytes: e.Value.TxBytes,
		RxPackets: e.Value.RxPackets, RxBytes: e.Value.RxBytes,
	}
	switch e.Tuple.Direction {
	case ctmap.DirService:
		out.Direction = "service"
	case ctmap.DirNodePort:
		out.Direction = "nodeport"
	}
	if e.Value.Flags&ctmap.FlagClosing != 0 {
		out.Flags = append(out.Flags, "closing")
	}
	if e.Value.Flags&ctmap.FlagLoopback != 0 {
		out.Flags = append(out.Flags, "loopback")
	}
	return out
}
