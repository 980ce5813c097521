package bpfapi

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/datapath/maps/ipcachemap"
)

const ipcacheKind = "bpf-ipcache"

// newIPCacheHandler serves GET /v1/bpf/ipcache: the BPF ipcache map,
// sorted by family, address and prefix length, a page at a time.
func newIPCacheHandler(m *maps) api.HandlerOut {
	return api.NewHandlerOut(http.MethodGet, "/v1/bpf/ipcache", func(w http.ResponseWriter, r *http.Request) {
		if !m.available(w) {
			return
		}
		q, err := api.ParseListQuery(r, ipcacheKind)
		if err != nil {
			api.WriteError(w, http.StatusBadRequest, err)
			return
		}
		items, err := m.ipcache()
		if err != nil {
			api.WriteError(w, http.StatusInternalServerError, err)
			return
		}
		out, cont := page(ipcacheKind, items, q)
		api.WriteList(w, api.ListPage[models.BPFIPCacheEntry]{ItemsName: "items", Items: slices.Values(out), Continue: cont})
	})
}

// ipcache reads the ipcache map.
func (m *maps) ipcache() ([]keyed[models.BPFIPCacheEntry], error) {
	im, err := ipcachemap.Open(m.log, m.root)
	if err != nil {
		return nil, fmt.Errorf("open BPF ipcache map: %w", err)
	}
	defer im.Close()
	entries, err := im.Dump()
	if err != nil {
		return nil, err
	}
	out := make([]keyed[models.BPFIPCacheEntry], 0, len(entries))
	for p, e := range entries {
		a := p.Addr().As16()
		item := models.BPFIPCacheEntry{Prefix: p.String(), Identity: uint32(e.Identity), EncryptKey: e.EncryptKey}
		if e.TunnelPeer.IsValid() {
			item.TunnelPeer = e.TunnelPeer.String()
		}
		fam := 6
		if p.Addr().Is4() {
			fam = 4
		}
		out = append(out, keyed[models.BPFIPCacheEntry]{key: fmt.Sprintf("%d%x%02x", fam, a, p.Bits()), item: item})
	}
	return out, nil
}
