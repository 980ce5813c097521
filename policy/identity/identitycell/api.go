package identitycell

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/identity/identitycache"
)

// ToModel converts an identity to its API form.
func ToModel(id *identity.Identity) models.Identity {
	out := models.Identity{ID: uint32(id.ID), Scope: id.ID.ScopeName(), Labels: make([]string, 0, len(id.Labels))}
	for _, l := range id.Labels {
		out.Labels = append(out.Labels, l.String())
	}
	return out
}

// listKind names the identity list in its continue tokens.
const listKind = "identity"

// newListHandler serves GET /v1/identity: the known identities sorted by
// id, a page at a time (?limit=, ?continue=; `apiary identity list`).
// The token is the last id of the page.
func newListHandler(m *identitycache.Manager) api.HandlerOut {
	return api.NewHandlerOut(http.MethodGet, "/v1/identity", func(w http.ResponseWriter, r *http.Request) {
		q, err := api.ParseListQuery(r, listKind)
		if err != nil {
			api.WriteError(w, http.StatusBadRequest, err)
			return
		}
		var after identity.NumericIdentity
		if q.After != "" {
			n, err := strconv.ParseUint(q.After, 10, 32)
			if err != nil {
				api.WriteError(w, http.StatusBadRequest, fmt.Errorf("query parameter continue: %q is not an identity", q.After))
				return
			}
			after = identity.NumericIdentity(n)
		}
		page, more := m.IdentitiesAfter(after, q.Limit)
		var cont string
		if more {
			cont = api.ContinueToken(listKind, strconv.FormatUint(uint64(page[len(page)-1].ID), 10))
		}
		api.WriteList(w, api.ListPage[models.Identity]{
			ItemsName: "items",
			Items: func(yield func(models.Identity) bool) {
				for _, id := range page {
					if !yield(ToModel(id)) {
						return
					}
				}
			},
			Continue: cont,
		})
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
