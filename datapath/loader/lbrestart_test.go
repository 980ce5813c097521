package loader_test

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/loader"
	"github.com/apiary-net/apiary/datapath/maps/lbmap"
	"github.com/apiary-net/apiary/policy"
)

// TestServiceSurvivesRestart opens a connection through a ClusterIP, then
// does what an agent restart does to the datapath: the loader and the
// service writer are closed, new ones open the same pinned maps, the
// endpoint's programs are attached again and the control plane's full
// reconcile runs. The connection keeps its backend (ids kept), and new
// connections are still balanced.
func TestServiceSurvivesRestart(t *testing.T) {
	inNewNetns(t, func() {
		l := newLBLab(t, policy.MapState{key(0, policy.Egress, policy.ProtoTCP, 8080, 16): allow})
		vip := netip.AddrPortFrom(vip4, 80)
		svc := datapath.LBService{Frontend: datapath.L3n4Addr{Addr: vip4, Port: 80, Proto: datapath.ProtoTCP}, Name: "default/web"}
		for i := 1; i <= 3; i++ {
			svc.Backends = append(svc.Backends, datapath.LBBackend{Addr: datapath.L3n4Addr{Addr: backendAddr(i, false), Port: 8080, Proto: datapath.ProtoTCP}})
		}
		if err := l.lb.UpsertService(svc); err != nil {
			t.Fatal(err)
		}
		name, r, conn := l.hello(t, vip)
		defer conn.Close()

		// The restart.
		l.lb.Close()
		l.h.loader.Close()
		nl, err := loader.New(testLogger(), l.h.root, 1024)
		if err != nil {
			t.Fatal(err)
		}
		if err := nl.Open(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nl.Close() })
		lnk, err := netlinkIndex("lxc7")
		if err != nil {
			t.Fatal(err)
		}
		if err := nl.Attach(datapath.EndpointSpec{ID: datapath.EndpointID(epID), Identity: epIdentity, IfIndex: lnk, EgressEnforcement: true}); err != nil {
			t.Fatal(err)
		}
		w, err := lbmap.OpenWriter(testLogger(), l.h.root)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if added, removed, err := w.ReconcileServices(slices.Values([]datapath.LBService{svc})); err != nil || added != 0 || removed != 0 {
			t.Fatalf("reconcile after the restart: %d added, %d removed, %v; want nothing changed", added, removed, err)
		}
		l.lb = w

		conn.SetDeadline(time.Now().Add(safety))
		if _, err := fmt.Fprintln(conn, "after restart"); err != nil {
			t.Fatal(err)
		}
		got, err := r.ReadString('\n')
		if err != nil || strings.TrimSpace(got) != "after restart" {
			t.Fatalf("the connection to %s after the restart: %q, %v", name, got, err)
		}
		if seen := l.names(t, vip, 20); len(seen) < 2 {
			t.Errorf("20 connections after the restart reached %v, want them balanced", seen)
		}
	})
}
