package nodesync

import (
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/localnode"
)

func node(cidrs ...string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: corev1.NodeSpec{PodCIDRs: cidrs}}
}

// TestWatcher: the store gets the Node's first valid pod CIDRs once; a
// Node without them changes nothing, bad or changed CIDRs degrade the
// module's health naming the field, and the store keeps its CIDRs.
func TestWatcher(t *testing.T) {
	b := celltest.NewBare(t)
	st := localnode.NewStore(localnode.LocalNode{Name: "a"})
	w := watcher{local: st, log: celltest.Logger(t), health: b.Health.Root().NewScope("sync")}
	w.report("a")
	b.WantHealth("sync", cell.LevelOK, "waiting for spec.podCIDRs of node a", "")

	w.upsert(node())
	w.upsert(node("10.0.1.0/24", "10.0.2.0/24"))
	b.WantHealth("sync", cell.LevelDegraded, "bad spec.podCIDRs", "node a: field spec.podCIDRs: more than one IPv4 CIDR (10.0.2.0/24)")
	if n := st.Get(); n.IPv4AllocCIDR.IsValid() {
		t.Fatalf("store took bad CIDRs: %+v", n)
	}

	w.upsert(node("10.0.1.0/24", "fd00:1::/64"))
	b.WantHealth("sync", cell.LevelOK, "pod CIDRs of node a: 10.0.1.0/24,fd00:1::/64", "")
	if n := st.Get(); n.IPv4AllocCIDR != netip.MustParsePrefix("10.0.1.0/24") || n.IPv6AllocCIDR != netip.MustParsePrefix("fd00:1::/64") {
		t.Fatalf("store: %+v", n)
	}

	w.upsert(node("10.0.9.0/24"))
	b.WantHealth("sync", cell.LevelDegraded, "spec.podCIDRs changed",
		"node a: spec.podCIDRs is 10.0.9.0/24, the agent uses 10.0.1.0/24,fd00:1::/64: restart the agent to take the new CIDRs")
	if n := st.Get(); n.IPv4AllocCIDR != netip.MustParsePrefix("10.0.1.0/24") {
		t.Fatalf("store changed CIDRs: %+v", n)
	}
}
