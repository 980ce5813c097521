package endpointcell_test

import (
	"slices"
	"testing"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/datapath/datapathtest"
)

// TestNamedPortsIdentityLabel: pods of one label set that number a port
// name differently get the generated named-ports label, so different
// identities, as Cilium's agent gives them; the same ports share one.
func TestNamedPortsIdentityLabel(t *testing.T) {
	a := startAgent(t, t.TempDir(), []cell.Cell{datapathtest.CellOf(datapathtest.New())})
	http := func(port uint16) []models.NamedPort {
		return []models.NamedPort{{Name: "http", Port: port, Protocol: "TCP"}}
	}
	e1 := a.put(t, 1, models.EndpointRequest{NetNSPath: fakeNetNS(t, "ns1"), Labels: podLabels, NamedPorts: http(8080)})
	e2 := a.put(t, 2, models.EndpointRequest{NetNSPath: fakeNetNS(t, "ns2"), Labels: podLabels, NamedPorts: http(8081)})
	e3 := a.put(t, 3, models.EndpointRequest{NetNSPath: fakeNetNS(t, "ns3"), Labels: podLabels, NamedPorts: http(8080)})
	if !slices.Contains(e1.Labels, "gen:io.cilium.k8s.named-ports=http.TCP.8080") {
		t.Errorf("endpoint 1 labels %v lack the named-ports label", e1.Labels)
	}
	if e1.Identity == e2.Identity {
		t.Errorf("endpoints numbering http 8080 and 8081 share identity %d", e1.Identity)
	}
	if e1.Identity != e3.Identity {
		t.Errorf("endpoints with the same ports have identities %d and %d", e1.Identity, e3.Identity)
	}
}
