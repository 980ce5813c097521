package bpfapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/maps/lbmap"
	"github.com/apiary-net/apiary/datapath/monitor/monitortest"
)

// TestLBList writes two services into the agent's pinned maps and reads
// them back through GET /v1/bpf/lb, a page per frontend.
func TestLBList(t *testing.T) {
	a := monitortest.Start(t)
	w, err := lbmap.OpenWriter(slog.New(slog.NewTextHandler(io.Discard, nil)), a.Root)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	be := func(s string, state datapath.BackendState) datapath.LBBackend {
		ap := netip.MustParseAddrPort(s)
		return datapath.LBBackend{Addr: datapath.L3n4Addr{Addr: ap.Addr(), Port: ap.Port(), Proto: datapath.ProtoUDP}, State: state, ClusterID: 2}
	}
	fe := func(s string) datapath.L3n4Addr {
		ap := netip.MustParseAddrPort(s)
		return datapath.L3n4Addr{Addr: ap.Addr(), Port: ap.Port(), Proto: datapath.ProtoUDP}
	}
	for _, svc := range []datapath.LBService{
		{Frontend: fe("[fd00::10]:53"), Type: datapath.SVCTypeClusterIP, Backends: []datapath.LBBackend{be("[fd00::1:1]:53", datapath.BackendActive)}},
		{Frontend: fe("10.96.0.10:53"), Type: datapath.SVCTypeClusterIP, SessionAffinityTimeout: time.Minute,
			Backends: []datapath.LBBackend{be("10.0.1.1:53", datapath.BackendActive), be("10.0.1.2:53", datapath.BackendTerminating)}},
	} {
		if err := w.UpsertService(svc); err != nil {
			t.Fatal(err)
		}
	}
	var got []models.BPFLBService
	pages := 0
	for page, err := range a.Client.BPFLBPages(context.Background(), client.ListOptions{Limit: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		pages++
		got = append(got, page.Items...)
	}
	if pages != 2 || len(got) != 2 {
		t.Fatalf("%d pages of %+v, want 2 frontends on 2 pages", pages, got)
	}
	v4, v6 := got[0], got[1]
	if v4.Frontend != "10.96.0.10:53/UDP" || v6.Frontend != "[fd00::10]:53/UDP" {
		t.Errorf("frontends %s, %s; want IPv4 then IPv6", v4.Frontend, v6.Frontend)
	}
	if !slices.Equal(v4.Flags, []string{"ClusterIP", "sessionAffinity", "non-routable"}) || v4.AffinityTimeoutSeconds != 60 || v4.Count != 1 {
		t.Errorf("IPv4 frontend %+v, want flags ClusterIP, sessionAffinity, non-routable, 60 s, one active backend", v4)
	}
	if len(v4.Backends) != 1 || v4.Backends[0].Address != "10.0.1.1:53/UDP" || v4.Backends[0].Slot != 1 ||
		v4.Backends[0].State != "active" || v4.Backends[0].ClusterID != 2 || v4.RevNATIndex == 0 {
		t.Errorf("IPv4 backends %+v, want slot 1 -> 10.0.1.1:53/UDP of cluster 2 (the terminating one has no slot)", v4.Backends)
	}
}
