package loader_test

import (
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/loader"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
)

// tcFilters returns the names and program ids of the bpf filters on
// ifindex's clsact hook parent.
func tcFilters(t *testing.T, ifindex int, parent uint32) (names []string, ids []int) {
	t.Helper()
	lk, err := netlink.LinkByIndex(ifindex)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := netlink.FilterList(lk, parent)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if bf, ok := f.(*netlink.BpfFilter); ok {
			names, ids = append(names, bf.Name), append(ids, bf.Id)
		}
	}
	return names, ids
}

// TestTCAttachReplaceRestoreDetach runs the tc clsact fallback (kernels
// without tcx) through the loader's life cycle on a real veth.
func TestTCAttachReplaceRestoreDetach(t *testing.T) {
	root := bpfmaptest.Root(t)
	inNewNetns(t, func() {
		ifindex := newVeth(t, "lxc7")
		l, err := loader.New(testLogger(), root, 1024, loader.WithAttachMode(loader.AttachTC))
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Open(); err != nil {
			t.Fatal(err)
		}
		ep := datapath.EndpointSpec{ID: datapath.EndpointID(epID), Identity: epIdentity, IfIndex: ifindex, IngressEnforcement: true, EgressEnforcement: true}
		if err := l.Attach(ep); err != nil {
			t.Fatal(err)
		}
		in, inIDs := tcFilters(t, ifindex, netlink.HANDLE_MIN_INGRESS)
		out, _ := tcFilters(t, ifindex, netlink.HANDLE_MIN_EGRESS)
		if len(in) != 1 || in[0] != "from_container" || len(out) != 1 || out[0] != "to_container" {
			t.Fatalf("tc filters: ingress %v, egress %v; want [from_container], [to_container]", in, out)
		}

		ep.EgressEnforcement = false
		if err := l.Attach(ep); err != nil {
			t.Fatal(err)
		}
		in, ids := tcFilters(t, ifindex, netlink.HANDLE_MIN_INGRESS)
		if len(in) != 1 || ids[0] == inIDs[0] {
			t.Fatalf("after replace: ingress %v %v, want one filter with a program other than %v", in, ids, inIDs)
		}

		// The agent stops; the filters stay; a new agent restores them.
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l2, err := loader.New(testLogger(), root, 1024, loader.WithAttachMode(loader.AttachTC))
		if err != nil {
			t.Fatal(err)
		}
		if err := l2.Open(); err != nil {
			t.Fatal(err)
		}
		defer l2.Close()
		if in, _ := tcFilters(t, ifindex, netlink.HANDLE_MIN_INGRESS); len(in) != 1 {
			t.Fatalf("with the loader closed: ingress filters %v, want the program still attached", in)
		}
		if err := l2.Restore(epID, ifindex); err != nil {
			t.Fatal(err)
		}
		other := newVeth(t, "lxc8")
		if err := l2.Restore(epID+1, other); err == nil {
			t.Error("Restore onto an interface without filters succeeded")
		}

		if err := l2.Detach(epID); err != nil {
			t.Fatal(err)
		}
		in, _ = tcFilters(t, ifindex, netlink.HANDLE_MIN_INGRESS)
		out, _ = tcFilters(t, ifindex, netlink.HANDLE_MIN_EGRESS)
		if len(in)+len(out) != 0 {
			t.Errorf("after Detach: ingress %v, egress %v; want none", in, out)
		}
	})
}
