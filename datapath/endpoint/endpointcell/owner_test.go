package endpointcell_test

import (
	"context"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/datapath/datapathtest"
)

// TestContainerAndPodFields: the CNI plugin's container id and the pod's
// namespace and name are stored with the endpoint, survive a restart of
// the agent, are checked field by field, and one container interface has
// one endpoint.
func TestContainerAndPodFields(t *testing.T) {
	ctx := context.Background()
	stateDir := t.TempDir()
	f := datapathtest.New()
	a := startAgent(t, stateDir, []cell.Cell{datapathtest.CellOf(f)})
	ns := fakeNetNS(t, "ns")
	owner := models.EndpointRequest{NetNSPath: ns, Labels: podLabels, ContainerID: "0123abcd", PodNamespace: "default", PodName: "web-0"}
	ep := a.put(t, 7, owner)
	if ep.ContainerID != "0123abcd" || ep.PodNamespace != "default" || ep.PodName != "web-0" {
		t.Fatalf("PUT answered %+v, want the container and pod fields", ep)
	}

	tests := []struct {
		name string
		give models.EndpointRequest
		code int
		want []string
	}{
		{"same container interface", owner, 409, []string{"endpoint 7 is container 0123abcd's eth0"}},
		{"bad container id", models.EndpointRequest{NetNSPath: ns, Labels: podLabels, ContainerID: "a/b"}, 400, []string{"field container-id"}},
		{"bad namespace", models.EndpointRequest{NetNSPath: ns, Labels: podLabels, PodNamespace: "Default"}, 400, []string{"field pod-namespace"}},
		{"name without namespace", models.EndpointRequest{NetNSPath: ns, Labels: podLabels, PodName: "web-1"}, 400, []string{"field pod-name", "without a pod-namespace"}},
		{"bad name", models.EndpointRequest{NetNSPath: ns, Labels: podLabels, PodNamespace: "default", PodName: "Web_1"}, 400, []string{"field pod-name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := a.client.EndpointPut(ctx, 8, tt.give)
			wantStatus(t, err, tt.code)
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	t.Run("another interface of the container", func(t *testing.T) {
		req := owner
		req.InterfaceName = "net1"
		if got := a.put(t, 8, req); got.ContainerID != "0123abcd" || got.InterfaceName != "net1" {
			t.Fatalf("endpoint 8: %+v", got)
		}
	})

	if err := a.hive.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	b := startAgent(t, stateDir, []cell.Cell{datapathtest.CellOf(f)})
	got, err := b.client.Endpoint(ctx, 7)
	if err != nil || got.ContainerID != "0123abcd" || got.PodNamespace != "default" || got.PodName != "web-0" {
		t.Fatalf("endpoint 7 after a restart: %+v %v", got, err)
	}
}
