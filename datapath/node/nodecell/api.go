package nodecell

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/datapath/node"
)

// newNodesHandler serves GET /v1/node: the nodes sorted by cluster and
// name, a page at a time (?limit=, ?continue=; `apiary node list`).
func newNodesHandler(m node.Manager) api.HandlerOut {
	return api.NewHandlerOut(http.MethodGet, "/v1/node", func(w http.ResponseWriter, r *http.Request) {
		q, err := api.ParseListQuery(r, nodeListKind)
		if err != nil {
			api.WriteError(w, http.StatusBadRequest, err)
			return
		}
		var after node.Identity
		if q.After != "" {
			if err := json.Unmarshal([]byte(q.After), &after); err != nil {
				api.WriteError(w, http.StatusBadRequest, fmt.Errorf("query parameter continue: %q is not a node", q.After))
				return
			}
		}
		localNode := m.LocalNode()
		local := localNode.Identity()
		page, more := m.NodesAfter(after, q.Limit)
		var cont string
		if more {
			key, _ := json.Marshal(page[len(page)-1].Identity())
			cont = api.ContinueToken(nodeListKind, string(key))
		}
		api.WriteList(w, api.ListPage[models.Node]{
			Fields:    []api.Field{{Name: "local-cluster", Value: localNode.Cluster}},
			ItemsName: "items",
			Items: func(yield func(models.Node) bool) {
				for _, n := range page {
					if !yield(Model(n, n.Identity() == local)) {
						return
					}
				}
			},
			Continue: cont,
		})
	})
}

// nodeListKind names the node list in its continue tokens.
const nodeListKind = "node"

// Model converts a node to its API form.
func Model(n node.Node, local bool) models.Node {
	m := models.Node{
		Name: n.Name, Cluster: n.Cluster, ClusterID: n.ClusterID, Local: local, Source: string(n.Source),
		Addresses:   make([]models.NodeAddress, 0, len(n.IPAddresses)),
		PrimaryIPv4: addrString(n.PrimaryIP(false)), PrimaryIPv6: addrString(n.PrimaryIP(true)),
		IPv4AllocCIDR: prefixString(n.IPv4AllocCIDR), IPv6AllocCIDR: prefixString(n.IPv6AllocCIDR),
		IPv4HealthIP: addrString(n.IPv4HealthIP), IPv6HealthIP: addrString(n.IPv6HealthIP),
		EncryptionKey: n.EncryptionKey, Labels: n.Labels, Annotations: n.Annotations,
	}
	for _, a := range n.IPAddresses {
		m.Addresses = append(m.Addresses, models.NodeAddress{Type: string(a.Type), IP: a.IP.String()})
	}
	return m
}

func addrString(a netip.Addr) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}

func prefixString(p netip.Prefix) string {
	if !p.IsValid() {
		return ""
	}
	return p.String()
}
