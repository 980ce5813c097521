package endpointcell_test

import (
	"context"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/datapathtest"
	"github.com/apiary-net/apiary/policy"
)

// heldRemotes is a RemoteSync whose remotes sync when the test says so.
type heldRemotes struct {
	called  chan struct{}
	release chan struct{}
}

func (r *heldRemotes) WaitForRemotesSynced(ctx context.Context) error {
	select {
	case r.called <- struct{}{}:
	default:
	}
	select {
	case <-r.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestFirstRegenerationWaitsForRemotes: a policy change does not
// regenerate the endpoints until the remote clusters have synced (their
// identities would be missing from the policy), then it does.
func TestFirstRegenerationWaitsForRemotes(t *testing.T) {
	ctx := context.Background()
	f := datapathtest.New()
	r := &heldRemotes{called: make(chan struct{}, 1), release: make(chan struct{})}
	var regen policy.RegenerationRequests
	a := startAgent(t, t.TempDir(), []cell.Cell{datapathtest.CellOf(f), celltest.Capture(&regen),
		cell.Provide(func() datapath.RemoteSync { return r })})
	select {
	case <-r.called:
	case <-time.After(30 * time.Second):
		t.Fatal("the endpoint manager never waited for the remote clusters")
	}
	a.put(t, 1, models.EndpointRequest{NetNSPath: fakeNetNS(t, "web"), Labels: podLabels})
	if _, err := a.client.PolicyPut(ctx, []byte(webPolicy)); err != nil {
		t.Fatal(err)
	}
	celltest.Eventually(t, "the policy's regeneration is requested", func() bool {
		requests, _ := regen.Stats()
		return requests > 0
	})
	// Held: for a second the endpoint keeps the policy it was created with.
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if ep, err := a.client.Endpoint(ctx, 1); err != nil || ep.Policy.IngressEnforcement {
			t.Fatalf("endpoint regenerated before the remote clusters synced: %+v, %v", ep, err)
		}
	}
	close(r.release)
	celltest.Eventually(t, "the endpoint regenerated once the remotes synced", func() bool {
		ep, err := a.client.Endpoint(ctx, 1)
		return err == nil && ep.State == "ready" && ep.Policy.IngressEnforcement
	})
}
