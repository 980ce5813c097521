package kvstorecell

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

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

// newListHandler serves GET /v1/kvstore?prefix=: every key under a
// prefix, sorted, with the lease it is bound to (`apiary kvstore list`).
func newListHandler(c kvstore.Client) api.HandlerOut {
	return api.NewHandlerOut(http.MethodGet, "/v1/kvstore", func(w http.ResponseWriter, r *http.Request) {
		prefix := r.URL.Query().Get("prefix")
		values, err := c.ListPrefix(r.Context(), prefix)
		if err != nil {
			api.WriteError(w, apiStatus(err), err)
			return
		}
		out := make([]models.KVPair, 0, len(values))
		for k, v := range values {
			out = append(out, pair(k, v))
		}
		slices.SortFunc(out, func(a, b models.KVPair) int { return strings.Compare(a.Key, b.Key) })
		api.WriteJSON(w, http.StatusOK, out)
	})
}

func pair(key string, v kvstore.Value) models.KVPair {
	p := models.KVPair{Key: key, Value: string(v.Data)}
	if v.LeaseID != 0 {
		p.Lease = fmt.Sprintf("%x", v.LeaseID)
	}
	return p
}
