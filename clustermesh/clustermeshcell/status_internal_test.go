package clustermeshcell

import (
	"context"
	"testing"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/clustermesh"
)

// TestStatusWaitsForFirstRead: until the config dir was read once the
// ClusterMesh line says so and is not Ok (not "0/0 clusters ready"); it
// turns Ok once the directory was read.
func TestStatusWaitsForFirstRead(t *testing.T) {
	dir := t.TempDir()
	cm := clustermesh.New(clustermesh.Params{Config: clustermesh.Config{ClusterMeshConfig: dir}})
	probe := newStatusProvider(nil, cm).Provider.Probe
	got := probe(t.Context())
	if want := "Waiting for initial read of " + dir; got.State != status.Warning || got.Message != want {
		t.Errorf("before the first read: %s %q, want Warning %q", got.State, got.Message, want)
	}

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- cm.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
	}()
	celltest.Eventually(t, "the ClusterMesh line Ok", func() bool {
		got = probe(t.Context())
		return got.State == status.Ok
	})
	if want := "0/0 clusters ready, 0 global-services"; got.Message != want {
		t.Errorf("after the first read: %q, want %q", got.Message, want)
	}
}
