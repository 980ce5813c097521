package ipcachecell

import (
	"fmt"
	"iter"
	"net/http"
	"net/netip"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/policy/ipcache"
)

// listKind names the ipcache list in its continue tokens.
const listKind = "ipcache"

// newListHandler serves GET /v1/ipcache[?prefix=<cidr or ip>]: the
// entries, or those within the prefix, a page at a time (?limit=,
// ?continue=) in prefix order (`apiary ipcache list`). The token is the
// last prefix of the page, so the next page starts after it whatever
// changed meanwhile.
func newListHandler(c ipcache.IPCache) api.HandlerOut {
	return api.NewHandlerOut(http.MethodGet, "/v1/ipcache", func(w http.ResponseWriter, r *http.Request) {
		within, q, err := parseListQuery(r)
		if err != nil {
			api.WriteError(w, http.StatusBadRequest, err)
			return
		}
		var after netip.Prefix
		if q.After != "" {
			if after, err = netip.ParsePrefix(q.After); err != nil {
				api.WriteError(w, http.StatusBadRequest, fmt.Errorf("query parameter continue: %q is not a prefix", q.After))
				return
			}
		}
		rev := c.Revision()
		page, more := c.EntriesAfter(within, after, q.Limit)
		var cont string
		if more {
			cont = api.ContinueToken(listKind, page[len(page)-1].Prefix.String())
		}
		api.WriteList(w, api.ListPage[models.IPCacheEntry]{
			Fields:    []api.Field{{Name: "revision", Value: uint64(rev)}},
			ItemsName: "entries",
			Items:     modelsOf(page),
			Continue:  cont,
		})
	})
}

// parseListQuery reads ?prefix=, ?limit= and ?continue=.
func parseListQuery(r *http.Request) (netip.Prefix, api.ListQuery, error) {
	var within netip.Prefix
	if s := r.URL.Query().Get("prefix"); s != "" {
		p, err := ipcache.ParsePrefixOrIP(s)
		if err != nil {
			return within, api.ListQuery{}, fmt.Errorf("query parameter prefix: %w", err)
		}
		within = p
	}
	q, err := api.ParseListQuery(r, listKind)
	return within, q, err
}

// modelsOf converts entries to their API form one at a time.
func modelsOf(entries []ipcache.Entry) iter.Seq[models.IPCacheEntry] {
	return func(yield func(models.IPCacheEntry) bool) {
		for _, e := range entries {
			if !yield(EntryModel(e)) {
				return
			}
		}
	}
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
		m.NamedPorts = append(m.NamedPorts, models.NamedPort{Name: p.Name, Port: p.Port, Protocol: string(p.Protocol)})
	}
	return m
}
