package loader_test

import (
	"fmt"
	"net/netip"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/linux"
	"github.com/apiary-net/apiary/datapath/loader/loadercell"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
)

// TestSocketTerminationCell: in the agent's cells (--bpf-lb-sock, the
// datapath in a namespace of the test's), a backend that leaves a
// service's list is deleted from the maps, and the sockets the
// socket-level balancer connected to it are destroyed without anyone
// asking, the node's and a pod's (the namespace of a process of the
// machine): the clients' connections abort, and the
// KubeProxyReplacement line counts the sockets.
func TestSocketTerminationCell(t *testing.T) {
	inNewNetns(t, func() {
		newVeth(t, "b1")
		ns := newNS(t)
		plumbLink(t, "b1", ns, []string{"10.1.1.1/24"}, []string{"10.1.1.2/24"})
		serve(t, ns, "b1")
		newVeth(t, "b2")
		ns2 := newNS(t)
		plumbLink(t, "b2", ns2, []string{"10.1.2.1/24"}, []string{"10.1.2.2/24"})
		serve(t, ns2, "b2")
		if err := os.WriteFile("/proc/sys/net/ipv4/ip_forward", []byte("1"), 0o644); err != nil {
			t.Fatal(err)
		}
		newVeth(t, "p1")
		pod := newNS(t)
		plumbLink(t, "p1", pod, []string{"10.1.9.1/24"}, []string{"10.1.9.2/24"})
		cg := testCgroup(t)
		// The namespace of this locked thread, where the sockets are.
		netns := fmt.Sprintf("/proc/%d/task/%d/ns/net", os.Getpid(), unix.Gettid())
		var lb datapath.LBMapWriter
		var col status.Collector
		root := bpfmaptest.Root(t)
		celltest.StartWithFlags(t, []string{"bpf-root=" + root, "bpf-lb-sock=true", "cgroup-root=" + cg, "datapath-netns=" + netns},
			loadercell.Cell, linux.Cell, status.Cell, celltest.Capture(&lb), celltest.Capture(&col))
		svc := func(backends ...string) datapath.LBService {
			s := datapath.LBService{Frontend: datapath.L3n4Addr{Addr: netip.MustParseAddr("10.96.0.10"), Port: 53, Proto: datapath.ProtoUDP}}
			for _, b := range backends {
				s.Backends = append(s.Backends, datapath.LBBackend{Addr: datapath.L3n4Addr{Addr: netip.MustParseAddr(b), Port: 5353, Proto: datapath.ProtoUDP}})
			}
			return s
		}
		if err := lb.UpsertService(svc("10.1.1.2")); err != nil {
			t.Fatal(err)
		}
		client, got := startHeld(t, cg, "holdudp 10.96.0.10:53")
		if got != "connected b1" {
			t.Fatalf("UDP client through the ClusterIP: %q", got)
		}
		podClient, got := startHeldIn(t, cg, pod, "holdudp 10.96.0.10:53")
		if got != "connected b1" {
			t.Fatalf("a pod's UDP client through the ClusterIP: %q", got)
		}
		if err := lb.UpsertService(svc("10.1.2.2")); err != nil {
			t.Fatal(err)
		}
		if got, err := client.next(); err != nil || !strings.HasSuffix(got, "software caused connection abort") {
			t.Fatalf("the client once its backend was replaced: %q, %v", got, err)
		}
		if got, err := podClient.next(); err != nil || !strings.HasSuffix(got, "software caused connection abort") {
			t.Fatalf("the pod's client once its backend was replaced: %q, %v", got, err)
		}
		celltest.Eventually(t, "the socket counted on the KubeProxyReplacement line", func() bool {
			for _, e := range col.Status().Entries {
				if e.Name == "KubeProxyReplacement" {
					return e.State == models.StateOk && strings.Contains(e.Message, "2 sockets of deleted backends terminated")
				}
			}
			return false
		})
		// The application connects again, to the backend that is there.
		if _, got := startHeld(t, cg, "holdudp 10.96.0.10:53"); got != "connected b2" {
			t.Errorf("the client connecting again: %q", got)
		}
	})
}
