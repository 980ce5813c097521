package loader_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
	"github.com/apiary-net/apiary/datapath/loader"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
)

// inNewNetns runs the test body on a thread moved into a fresh network
// namespace, so the veth pair it creates never touches the host's.
func inNewNetns(t *testing.T, body func()) {
	t.Helper()
	ns, err := netnsutil.New()
	if err != nil {
		celltest.SkipUnprivileged(t, "cannot create a network namespace (needs CAP_SYS_ADMIN): %v", err)
	}
	defer ns.Close()
	err = netnsutil.RunOnCallingThread(ns, func() error {
		body()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// newVeth creates a veth pair and returns the host side's ifindex.
func newVeth(t *testing.T, name string) int {
	t.Helper()
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: name}, PeerName: name + "p"}
	if err := netlink.LinkAdd(veth); err != nil {
		t.Fatalf("create veth: %v", err)
	}
	lk, err := netlink.LinkByName(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := netlink.LinkSetUp(lk); err != nil {
		t.Fatal(err)
	}
	return lk.Attrs().Index
}

// attached returns the names and ids of the programs on ifindex's tcx hook.
func attached(t *testing.T, ifindex int, at ebpf.AttachType) (names []string, ids []ebpf.ProgramID) {
	t.Helper()
	res, err := link.QueryPrograms(link.QueryOptions{Target: ifindex, Attach: at})
	if err != nil {
		t.Fatalf("query %v programs: %v", at, err)
	}
	for _, p := range res.Programs {
		prog, err := ebpf.NewProgramFromID(p.ID)
		if err != nil {
			t.Fatal(err)
		}
		info, err := prog.Info()
		prog.Close()
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, info.Name)
		ids = append(ids, p.ID)
	}
	return names, ids
}

func TestAttachReplaceRestoreDetach(t *testing.T) {
	root := bpfmaptest.Root(t)
	inNewNetns(t, func() {
		ifindex := newVeth(t, "lxc7")
		l, err := loader.New(testLogger(), root, 1024)
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
		inNames, inIDs := attached(t, ifindex, ebpf.AttachTCXIngress)
		outNames, _ := attached(t, ifindex, ebpf.AttachTCXEgress)
		if len(inNames) != 1 || inNames[0] != "from_container" || len(outNames) != 1 || outNames[0] != "to_container" {
			t.Fatalf("attached: ingress %v, egress %v; want [from_container], [to_container]", inNames, outNames)
		}

		// Regeneration replaces the programs in place: still one per hook, new ids.
		ep.EgressEnforcement = false
		if err := l.Attach(ep); err != nil {
			t.Fatal(err)
		}
		names, ids := attached(t, ifindex, ebpf.AttachTCXIngress)
		if len(names) != 1 || ids[0] == inIDs[0] {
			t.Fatalf("after replace: ingress %v %v, want one program with an id other than %v", names, ids, inIDs)
		}

		// The agent stops: the pinned links keep the programs attached.
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if names, _ := attached(t, ifindex, ebpf.AttachTCXIngress); len(names) != 1 {
			t.Fatalf("with the loader closed: ingress %v, want the program still attached", names)
		}
		for _, hook := range []string{loader.HookIngress, loader.HookEgress} {
			if _, err := os.Stat(filepath.Join(l.LinkDir(epID), hook)); err != nil {
				t.Errorf("pinned %s link: %v", hook, err)
			}
		}

		// A new agent restores them, refusing the wrong interface.
		l2, err := loader.New(testLogger(), root, 1024)
		if err != nil {
			t.Fatal(err)
		}
		if err := l2.Open(); err != nil {
			t.Fatal(err)
		}
		defer l2.Close()
		if err := l2.Restore(epID, ifindex+100); !errors.Is(err, datapath.ErrNotAttached) {
			t.Errorf("Restore onto another ifindex: %v, want ErrNotAttached", err)
		}
		if err := l2.Restore(epID, ifindex); err != nil {
			t.Fatal(err)
		}
		if err := l2.Restore(epID+1, ifindex); !errors.Is(err, datapath.ErrNotAttached) || !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Restore of an endpoint never attached: %v, want ErrNotAttached and ErrNotExist", err)
		}
		// ... and regenerates through the restored links.
		if err := l2.Attach(ep); err != nil {
			t.Fatal(err)
		}
		if names, _ := attached(t, ifindex, ebpf.AttachTCXIngress); len(names) != 1 {
			t.Fatalf("after restore + attach: ingress %v, want exactly one program", names)
		}

		if err := l2.Detach(epID); err != nil {
			t.Fatal(err)
		}
		in, _ := attached(t, ifindex, ebpf.AttachTCXIngress)
		out, _ := attached(t, ifindex, ebpf.AttachTCXEgress)
		if len(in)+len(out) != 0 {
			t.Errorf("after Detach: ingress %v, egress %v; want none", in, out)
		}
		if _, err := os.Stat(l2.LinkDir(epID)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("link directory after Detach: %v, want it gone", err)
		}
		if err := l2.Detach(epID); err != nil {
			t.Errorf("second Detach: %v", err)
		}
	})
}

// TestAttachMovesToANewInterface re-attaches an endpoint whose interface
// changed: its programs leave the old veth and run on the new one.
func TestAttachMovesToANewInterface(t *testing.T) {
	root := bpfmaptest.Root(t)
	inNewNetns(t, func() {
		oldIf, newIf := newVeth(t, "lxc8"), newVeth(t, "lxc9")
		l, err := loader.New(testLogger(), root, 1024)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Open(); err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ep := datapath.EndpointSpec{ID: 8, Identity: epIdentity, IfIndex: oldIf, IngressEnforcement: true, EgressEnforcement: true}
		if err := l.Attach(ep); err != nil {
			t.Fatal(err)
		}
		ep.IfIndex = newIf
		if err := l.Attach(ep); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			ifindex int
			want    int
		}{{oldIf, 0}, {newIf, 1}} {
			in, _ := attached(t, c.ifindex, ebpf.AttachTCXIngress)
			out, _ := attached(t, c.ifindex, ebpf.AttachTCXEgress)
			if len(in) != c.want || len(out) != c.want {
				t.Errorf("ifindex %d: ingress %v, egress %v; want %d each", c.ifindex, in, out, c.want)
			}
		}
		if err := l.Restore(8, newIf); err != nil {
			t.Errorf("Restore on the new interface: %v", err)
		}
	})
}
