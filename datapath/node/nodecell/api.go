package nodecell

import (
	"net/http"
	"net/netip"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/datapath/node"
)

// newNodesHandler serves GET /v1/node: every node (`apiary node list`).
func newNodesHandler(m node.Manager) api.HandlerOut {
	return api.NewHandlerOut(http.MethodGet, "/v1/node", func(w http.ResponseWriter, _ *http.Request) {
		local := m.LocalNode().Identity()
		nodes := m.Nodes()
		out := make([]models.Node, 0, len(nodes))
		for _, n := range nodes {
			out = append(out, Model(n, n.Identity() == local))
		}
		api.WriteJSON(w, http.StatusOK, out)
	})
}

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
