package clustermeshcell

import (
	"net/http"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/clustermesh"
)

// serviceListKind names the global service list in its continue tokens.
const serviceListKind = "service"

// newServiceListHandler serves GET /v1/service: the global services the
// remote clusters share, merged per namespace/name and sorted by it, a
// page at a time (?limit=, ?continue=; `apiary service list`). The token
// is the last namespace/name of the page.
func newServiceListHandler(cm *clustermesh.ClusterMesh) api.HandlerOut {
	return api.NewHandlerOut(http.MethodGet, "/v1/service", func(w http.ResponseWriter, r *http.Request) {
		q, err := api.ParseListQuery(r, serviceListKind)
		if err != nil {
			api.WriteError(w, http.StatusBadRequest, err)
			return
		}
		page, more := cm.Services().ListAfter(q.After, q.Limit)
		var cont string
		if more {
			last := page[len(page)-1]
			cont = api.ContinueToken(serviceListKind, last.Namespace+"/"+last.Name)
		}
		api.WriteList(w, api.ListPage[models.GlobalService]{
			ItemsName: "items",
			Items: func(yield func(models.GlobalService) bool) {
				for _, s := range page {
					if !yield(s) {
						return
					}
				}
			},
			Continue: cont,
		})
	})
}
