package svcmanagercell

import (
	"log/slog"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/svcmanager"
	"github.com/apiary-net/apiary/datapath/svcmanager/svcmanagertest"
)

// degraded is a HealthReporter with one degraded scope.
type degraded struct{}

func (degraded) All() []cell.HealthStatus {
	return []cell.HealthStatus{{ID: "agent.kvstore", Level: cell.LevelDegraded}}
}
func (degraded) Tree() *cell.HealthNode { return nil }

// TestProxyState: writes failing for longer than kube-proxy's timeout,
// a degraded agent and a manager without a datapath are unhealthy.
func TestProxyState(t *testing.T) {
	now := time.Now()
	if s := proxyState(svcmanager.New(nil, svcmanager.Node{}, slog.New(slog.DiscardHandler)), nil, localnode.LocalNode{}, now); s.Healthy ||
		s.Reason != "no load-balancing datapath in this agent" {
		t.Errorf("without a datapath: %+v", s)
	}
	w := svcmanagertest.New()
	m := svcmanager.New(w, svcmanager.Node{Name: "node1"}, slog.New(slog.DiscardHandler))
	if s := proxyState(m, nil, localnode.LocalNode{}, now); s.Healthy || s.Reason != "waiting for the initial sync" {
		t.Errorf("before the reconcile: %+v", s)
	}
	if err := m.Reconcile(); err != nil {
		t.Fatal(err)
	}
	if s := proxyState(m, nil, localnode.LocalNode{}, now); !s.Healthy || !s.NodeEligible {
		t.Errorf("reconciled: %+v", s)
	}
	if s := proxyState(m, degraded{}, localnode.LocalNode{}, now); s.Healthy || s.Reason != "agent degraded: agent.kvstore" {
		t.Errorf("a degraded agent: %+v", s)
	}
	w.SetFailing(true)
	m.Upsert(svcmanager.SourceFile, &svcmanager.Service{Namespace: "test", Name: "web",
		Frontends: []svcmanager.Frontend{{Addr: datapath.L3n4Addr{Addr: netip.MustParseAddr("10.96.0.10"), Port: 80, Proto: datapath.ProtoTCP},
			Type: datapath.SVCTypeClusterIP}}})
	if s := proxyState(m, nil, localnode.LocalNode{}, time.Now()); !s.Healthy {
		t.Errorf("a write failing for a moment: %+v", s)
	}
	later := time.Now().Add(proxyHealthTimeout + time.Second)
	if s := proxyState(m, nil, localnode.LocalNode{}, later); s.Healthy || !strings.HasPrefix(s.Reason, "1 frontends not written since ") {
		t.Errorf("a write failing for longer than %v: %+v", proxyHealthTimeout, s)
	}
	w.SetFailing(false)
	if err := m.RetryFailed(); err != nil {
		t.Fatal(err)
	}
	if s := proxyState(m, nil, localnode.LocalNode{BeingDeleted: true}, later); !s.Healthy || s.NodeEligible || s.Reason != "node being deleted" {
		t.Errorf("written again, the node being deleted: %+v", s)
	}
}
