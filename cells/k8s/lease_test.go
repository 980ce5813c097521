package k8s_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/k8s/k8stest"
)

// TestLeaseElector: of two agents one leads; the other takes the lease
// over once the holder gives it up, and only then.
func TestLeaseElector(t *testing.T) {
	srv := k8stest.Start(t)
	a := startAgent(t, "k8s-kubeconfig-path="+srv.WriteKubeconfig(k8stest.AdminToken))
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	one, err := k8s.NewLeaseElector(a.clientset, "kube-system", "test-lease", "node-a", time.Hour, log)
	if err != nil {
		t.Fatal(err)
	}
	two, err := k8s.NewLeaseElector(a.clientset, "kube-system", "test-lease", "node-b", time.Hour, log)
	if err != nil {
		t.Fatal(err)
	}
	if leads, err := one.TryAcquireOrRenew(ctx); err != nil || !leads {
		t.Fatalf("node-a: leads %v, %v", leads, err)
	}
	for range 2 {
		if leads, err := two.TryAcquireOrRenew(ctx); err != nil || leads {
			t.Fatalf("node-b while node-a holds the lease: leads %v, %v", leads, err)
		}
	}
	if !one.IsLeader() || two.IsLeader() {
		t.Fatalf("IsLeader: node-a %v, node-b %v", one.IsLeader(), two.IsLeader())
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); one.Run(runCtx) }()
	cancel() // Run gives the lease up when it stops
	<-done
	if leads, err := two.TryAcquireOrRenew(ctx); err != nil || !leads {
		t.Fatalf("node-b after node-a gave the lease up: leads %v, %v", leads, err)
	}
	if _, err := k8s.NewLeaseElector(a.clientset, "kube-system", "test-lease", "", time.Hour, log); err == nil {
		t.Fatal("an elector without a holder was accepted")
	}
}
