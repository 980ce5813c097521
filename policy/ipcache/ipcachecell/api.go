package ipcachecell

import (
	"fmt"
	"net/http"
	"net/netip"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/policy/ipcache"
)

// newListHandler serves GET /v1/ipcache[?prefix=<cidr or ip>]: every
// entry, or those within the prefix (`apiary ipcache list`).
func newListHandler(c ipcache.IPCache) api.HandlerOut {
	return api.NewHandlerOut(http.MethodGet, "/v1/ipcache", func(w http.ResponseWriter, r *http.Request) {
		var within netip.Prefix
		if s := r.URL.Query().Get("prefix"); s != "" {
			p, err := ipcache.ParsePrefixOrIP(s)
			if err != nil {
				api.WriteError(w, http.StatusBadRequest, fmt.Errorf("query parameter prefix: %w", err))
				return
			}
			within = p
		}
		rev := c.Revision()
		out := models.IPCache{Revision: uint64(rev), Entries: []models.IPCacheEntry{}}
		for _, e := range c.Entries() {
			if !within.IsValid() || contains(within, e.Prefix) {
				out.Entries = append(out.Entries, EntryModel(e))
			}
		}
		api.WriteJSON(w, http.StatusOK, out)
	})
}

// newGetHandler serves GET /v1/ipcache/{ip}: the entry of the longest
// prefix holding ip (`apiary ipcache get`), 404 when none does.
func newGetHandler(c ipcache.IPCache) api.HandlerOut {
	return api.NewHandlerOut(http.MethodGet, "/v1/ipcache/{ip}", func(w http.ResponseWriter, r *http.Request) {
		s := r.PathValue("ip")
		addr, err := netip.ParseAddr(s)
		if err != nil {
			api.WriteError(w, http.StatusBadRequest, fmt.Errorf("ip: %q is not an IP address", s))
			return
		}
		e, ok := c.LookupByIP(addr)
		if !ok {
			api.WriteError(w, http.StatusNotFound, fmt.Errorf("no ipcache entry holds %s", addr))
			return
		}
		api.WriteJSON(w, http.StatusOK, EntryModel(e))
	})
}

// contains reports whether inner lies within outer.
func contains(outer, inner netip.Prefix) bool {
	return inner.Bits() >= outer.Bits() && outer.Contains(inner.Addr())
}

// EntryModel converts an entry to its API form.
func EntryModel(e ipcache.Entry) models.IPCacheEntry {
	m := models.IPCacheEntry{
		Prefix: e.Prefix.String(), Identity: uint32(e.Identity), Reserved: e.Identity.ReservedName(), Source: string(e.Source),
		EncryptKey: e.EncryptKey, K8sNamespace: e.K8sNamespace, K8sPodName: e.K8sPodName,
	}
	if e.TunnelPeer.IsValid() {
		m.TunnelPeer = e.TunnelPeer.String()
	}
	for _, p := range e.NamedPorts {
		m.NamedPorts = append(m.NamedPorts, models.NamedPort{Name: p.Name, Port: p.Port, Protocol: p.Protocol})
	}
	return m
}
