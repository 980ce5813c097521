package identitycell

import (
	"fmt"
	"net/http"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/policy/identity"
)

// ToModel converts an identity to its API form.
func ToModel(id *identity.Identity) models.Identity {
	out := models.Identity{ID: uint32(id.ID), Scope: id.ID.ScopeName(), Labels: make([]string, 0, len(id.Labels))}
	for _, l := range id.Labels {
		out.Labels = append(out.Labels, l.String())
	}
	return out
}

// newListHandler serves GET /v1/identity: every known identity, sorted
// by id (`apiary identity list`).
func newListHandler(a identity.Allocator) api.HandlerOut {
	return api.NewHandlerOut(http.MethodGet, "/v1/identity", func(w http.ResponseWriter, _ *http.Request) {
		ids := a.GetIdentities()
		out := make([]models.Identity, 0, len(ids))
		for _, id := range ids {
			out = append(out, ToModel(id))
		}
		api.WriteJSON(w, http.StatusOK, out)
	})
}

// newGetHandler serves GET /v1/identity/{id}, where id is a number or a
// reserved name (`apiary identity get`).
func newGetHandler(a identity.Allocator) api.HandlerOut {
	return api.NewHandlerOut(http.MethodGet, "/v1/identity/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := identity.ParseNumericIdentity(r.PathValue("id"))
		if err != nil {
			api.WriteError(w, http.StatusBadRequest, err)
			return
		}
		ident := a.LookupIdentityByID(id)
		if ident == nil {
			api.WriteError(w, http.StatusNotFound, fmt.Errorf("identity %d not found", id))
			return
		}
		api.WriteJSON(w, http.StatusOK, ToModel(ident))
	})
}
