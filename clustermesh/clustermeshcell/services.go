package clustermeshcell

import (
	"net/http"
	"slices"
	"strings"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/clustermesh"
	"github.com/apiary-net/apiary/clustermesh/service"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/svcmanager"
)

// serviceListKind names the service list in its continue tokens.
const serviceListKind = "service"

type serviceListParams struct {
	cell.In

	Mesh    *clustermesh.ClusterMesh
	Cluster cluster.Info
	Manager *svcmanager.Manager `optional:"true"`
}

// newServiceListHandler serves GET /v1/service: every service with
// frontends in the service manager and every global service the
// clusters share, merged per namespace/name and sorted by it, a page at
// a time (?limit=, ?continue=; `apiary service list`). The token is the
// last namespace/name of the page.
func newServiceListHandler(p serviceListParams) api.HandlerOut {
	return api.NewHandlerOut(http.MethodGet, "/v1/service", func(w http.ResponseWriter, r *http.Request) {
		q, err := api.ParseListQuery(r, serviceListKind)
		if err != nil {
			api.WriteError(w, http.StatusBadRequest, err)
			return
		}
		page, more := listServices(p.Mesh.Services(), p.Manager, p.Cluster.ClusterName, q.After, q.Limit)
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

// listServices merges the global services of cache and the frontends of
// manager (may be nil): at most limit (all when < 0) after the
// namespace/name after, and whether more follow; local names this
// cluster.
func listServices(cache *service.Cache, manager *svcmanager.Manager, local, after string, limit int) ([]models.GlobalService, bool) {
	global, gmore := cache.ListAfter(after, limit)
	if manager == nil {
		return global, gmore
	}
	byName := map[string]*models.GlobalService{}
	for i := range global {
		byName[global[i].Namespace+"/"+global[i].Name] = &global[i]
	}
	names := cache.ClusterNames()
	names[0] = local
	for _, e := range manager.Frontends() {
		if e.Name <= after {
			continue
		}
		g := byName[e.Name]
		if g == nil {
			ns, name, _ := strings.Cut(e.Name, "/")
			g = &models.GlobalService{Namespace: ns, Name: name, Clusters: []models.ServiceCluster{}}
			byName[e.Name] = g
		}
		g.Frontends = append(g.Frontends, frontendModel(e, names))
	}
	keys := make([]string, 0, len(byName))
	for k := range byName {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	more := limit >= 0 && len(keys) > limit
	if more {
		keys = keys[:limit]
	}
	if gmore && !more && len(global) > 0 {
		// The global list was cut: nothing may follow its last name.
		last := global[len(global)-1]
		i, _ := slices.BinarySearch(keys, last.Namespace+"/"+last.Name)
		keys, more = keys[:i+1], true
	}
	out := make([]models.GlobalService, len(keys))
	for i, k := range keys {
		out[i] = *byName[k]
	}
	return out, more
}

var stateNames = map[datapath.BackendState]string{
	datapath.BackendActive: "active", datapath.BackendTerminating: "terminating", datapath.BackendQuarantined: "quarantined",
}

// frontendModel is the API's view of a frontend; names maps cluster ids
// to names.
func frontendModel(e svcmanager.Entry, names map[uint32]string) models.ServiceFrontend {
	f := models.ServiceFrontend{ID: e.ID, Address: e.Frontend.String(), Type: string(e.Type), LocalOnly: e.LocalOnly,
		SessionAffinityTimeout: int64(e.SessionAffinityTimeout.Seconds()), Backends: []models.ServiceBackend{}}
	for _, be := range e.Backends {
		f.Backends = append(f.Backends, models.ServiceBackend{Address: be.Addr.String(), State: stateNames[be.State],
			Cluster: names[be.ClusterID], ClusterID: be.ClusterID, NodeName: be.NodeName})
	}
	return f
}
