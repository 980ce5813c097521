package kvstorecell

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/kvstore"
)

// apiStatus maps kvstore errors to HTTP status codes.
func apiStatus(err error) int {
	if errors.Is(err, kvstore.ErrDisabled) || errors.Is(err, kvstore.ErrNotStarted) {
		return http.StatusServiceUnavailable
	}
	return http.StatusBadGateway
}

// newGetHandler serves GET /v1/kvstore/{key...}: one key, for debugging
// (`apiary kvstore get`).
func newGetHandler(c kvstore.Client) api.HandlerOut {
	return api.NewHandlerOut(http.MethodGet, "/v1/kvstore/{key...}", func(w http.ResponseWriter, r *http.Request) {
		key := r.PathValue("key")
		value, err := c.Get(r.Context(), key)
		if err != nil {
			api.WriteError(w, apiStatus(err), err)
			return
		}
		if value == nil {
			api.WriteError(w, http.StatusNotFound, fmt.Errorf("key %q not found", key))
			return
		}
		api.WriteJSON(w, http.StatusOK, models.KVPair{Key: key, Value: string(value)})
	})
}

// newListHandler serves GET /v1/kvstore?prefix=: the keys under a
// prefix in byte order, with the lease each is bound to, a page at a
// time (?limit=, ?continue=; `apiary kvstore list`). The token is the
// last key of the page.
func newListHandler(c kvstore.Client) api.HandlerOut {
	return api.NewHandlerOut(http.MethodGet, "/v1/kvstore", func(w http.ResponseWriter, r *http.Request) {
		prefix := r.URL.Query().Get("prefix")
		q, err := api.ParseListQuery(r, "kvstore")
		if err != nil {
			api.WriteError(w, http.StatusBadRequest, err)
			return
		}
		page, more, err := kvstore.ListPrefixPage(r.Context(), c, prefix, q.After, q.Limit)
		if err != nil {
			api.WriteError(w, apiStatus(err), err)
			return
		}
		var cont string
		if more {
			cont = api.ContinueToken("kvstore", page[len(page)-1].Key)
		}
		api.WriteList(w, api.ListPage[models.KVPair]{
			ItemsName: "items",
			Items: func(yield func(models.KVPair) bool) {
				for _, kv := range page {
					if !yield(pair(kv.Key, kv.Value)) {
						return
					}
				}
			},
			Continue: cont,
		})
	})
}

func pair(key string, v kvstore.Value) models.KVPair {
	p := models.KVPair{Key: key, Value: string(v.Data)}
	if v.LeaseID != 0 {
		p.Lease = fmt.Sprintf("%x", v.LeaseID)
	}
	return p
}
