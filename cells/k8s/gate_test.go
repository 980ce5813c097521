package k8s

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/client-go/rest"

	"github.com/apiary-net/apiary/cells/cell"
)

// hooks is a Lifecycle that records the hooks for the test to run.
type hooks []cell.HookInterface

func (h *hooks) Append(hook cell.HookInterface) { *h = append(*h, hook) }

func (h hooks) start(t *testing.T) {
	for _, hook := range h {
		if err := hook.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

func (h hooks) stop(t *testing.T) {
	for _, hook := range h {
		if err := hook.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

var enabled = &clientset{cfg: &rest.Config{Host: "https://127.0.0.1:1"}}

// waitOpen reports whether the gate opens by the time every goroutine of
// the bubble is blocked.
func waitOpen(g CacheSync) bool {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- g.WaitForCacheSync(ctx) }()
	synctest.Wait()
	select {
	case err := <-done:
		return err == nil
	default:
		cancel()
		<-done
		return false
	}
}

// TestGate: the gate opens when every registered cache has synced, or
// when --k8s-sync-timeout passed (logged once, naming what is missing);
// without Kubernetes it is open.
func TestGate(t *testing.T) {
	t.Run("synced", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var lc hooks
			g := newGate(DefaultConfig, enabled, &lc, slog.New(slog.DiscardHandler))
			pods, policies := g.Register("pods"), g.Register("policies")
			lc.start(t)
			defer lc.stop(t)
			pods()
			if waitOpen(g) {
				t.Fatal("open with policies pending")
			}
			if pending, _ := g.Pending(); strings.Join(pending, ",") != "policies" {
				t.Fatalf("pending: %v", pending)
			}
			policies()
			if !waitOpen(g) {
				t.Fatal("closed with every cache synced")
			}
		})
	})
	t.Run("timeout", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var (
				lc  hooks
				log bytes.Buffer
			)
			cfg := DefaultConfig
			cfg.K8sSyncTimeout = time.Minute
			g := newGate(cfg, enabled, &lc, slog.New(slog.NewTextHandler(&log, nil)))
			g.Register("policies")
			lc.start(t)
			defer lc.stop(t)
			time.Sleep(59 * time.Second)
			if waitOpen(g) {
				t.Fatal("open before the timeout")
			}
			time.Sleep(2 * time.Second)
			if !waitOpen(g) {
				t.Fatal("closed after the timeout")
			}
			if n := strings.Count(log.String(), "not synced within --k8s-sync-timeout"); n != 1 ||
				!strings.Contains(log.String(), "pending=[policies]") {
				t.Fatalf("log (want one line naming policies):\n%s", log.String())
			}
		})
	})
	t.Run("disabled", func(t *testing.T) {
		var lc hooks
		g := newGate(DefaultConfig, &clientset{}, &lc, slog.New(slog.DiscardHandler))
		g.Register("policies")
		if err := g.WaitForCacheSync(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}
