package api_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/celltest"
)

// TestHandlerDeadline: a handler that blocks (on a file, the kernel, a
// lock) is listed while it runs and its context ends at
// --api-write-timeout, so it stops instead of running for nobody.
func TestHandlerDeadline(t *testing.T) {
	ended := make(chan error, 1)
	block := api.Handler{Method: http.MethodGet, Path: "/v1/block", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
		ended <- r.Context().Err()
	})}
	var reqs api.Requests
	path := startAPIWithFlags(t, []string{"api-write-timeout=2s", "api-read-body-timeout=1s"}, provideHandler(block), celltest.Capture(&reqs))
	c := client.New(path)
	defer c.Close()
	go func() { _, _, _ = c.Do(context.Background(), http.MethodGet, "/v1/block", nil) }()
	celltest.Eventually(t, "the blocked request listed", func() bool {
		in := reqs.InFlight()
		return len(in) == 1 && in[0].Method == http.MethodGet && in[0].Path == "/v1/block"
	})
	select {
	case err := <-ended:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("handler's context ended with %v, want its deadline", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the handler's context never ended")
	}
	celltest.Eventually(t, "the request gone from the list", func() bool { return len(reqs.InFlight()) == 0 })
}
