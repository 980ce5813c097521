package lbmap_test

import (
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiary-net/apiary/bpf"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	"github.com/apiary-net/apiary/datapath/maps/lbmap"
	"github.com/apiary-net/apiary/datapath/svcmanager"
)

func TestLayoutMatchesPrograms(t *testing.T) {
	for _, tt := range []struct {
		name   string
		goVal  any
		genVal any
	}{
		{"lb4_key", lbmap.Service4Key{}, bpf.LxcLb4Key{}},
		{"lb6_key", lbmap.Service6Key{}, bpf.LxcLb6Key{}},
		{"lb_service", lbmap.ServiceValue{}, bpf.LxcLbService{}},
		{"lb4_backend", lbmap.Backend4Value{}, bpf.LxcLb4Backend{}},
		{"lb6_backend", lbmap.Backend6Value{}, bpf.LxcLb6Backend{}},
		{"lb4_rev_nat", lbmap.RevNAT4Value{}, bpf.LxcLb4RevNat{}},
		{"lb6_rev_nat", lbmap.RevNAT6Value{}, bpf.LxcLb6RevNat{}},
		{"lb_affinity_key", lbmap.AffinityKey{}, bpf.LxcLbAffinityKey{}},
		{"lb_affinity_value", lbmap.AffinityValue{}, bpf.LxcLbAffinityValue{}},
		{"lb_affinity_match_key", lbmap.AffinityMatchKey{}, bpf.LxcLbAffinityMatchKey{}},
		{"lb4_src_range_key", lbmap.SrcRange4Key{}, bpf.LxcLb4SrcRangeKey{}},
		{"lb6_src_range_key", lbmap.SrcRange6Key{}, bpf.LxcLb6SrcRangeKey{}},
	} {
		if a, b := binary.Size(tt.goVal), binary.Size(tt.genVal); a != b {
			t.Errorf("%s: Go type is %d bytes, C struct %d", tt.name, a, b)
		}
	}
}

func open(t testing.TB, root string) (*lbmap.Writer, *lbmap.Maps) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	w, err := lbmap.OpenWriter(log, root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	m, err := lbmap.OpenMaps(log, root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return w, m
}

func l3n4(s string, proto uint8) datapath.L3n4Addr {
	ap := netip.MustParseAddrPort(s)
	return datapath.L3n4Addr{Addr: ap.Addr(), Port: ap.Port(), Proto: proto}
}

func svc(fe string, backends ...string) datapath.LBService {
	s := datapath.LBService{Frontend: l3n4(fe, datapath.ProtoTCP), Type: datapath.SVCTypeClusterIP, Name: "default/web"}
	for _, b := range backends {
		state := datapath.BackendActive
		if strings.HasPrefix(b, "~") {
			b, state = b[1:], datapath.BackendTerminating
		}
		s.Backends = append(s.Backends, datapath.LBBackend{Addr: l3n4(b, datapath.ProtoTCP), State: state})
	}
	return s
}

// dump returns the maps' services by frontend string.
func dump(t *testing.T, m *lbmap.Maps) map[string]lbmap.Service {
	t.Helper()
	svcs, err := m.Dump()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]lbmap.Service{}
	for _, s := range svcs {
		out[s.Frontend.String()] = s
	}
	return out
}

// slotAddrs returns the backend of each slot, in slot order.
func slotAddrs(s lbmap.Service) []string {
	var out []string
	for _, sl := range s.Slots {
		out = append(out, netip.AddrPortFrom(sl.Backend.Addr, sl.Backend.Port).String())
	}
	return out
}

func backendIDs(s lbmap.Service) map[string]uint32 {
	out := map[string]uint32{}
	for _, sl := range s.Slots {
		out[netip.AddrPortFrom(sl.Backend.Addr, sl.Backend.Port).String()] = sl.BackendID
	}
	return out
}

func TestUpsertKeepsSlotsAndIDs(t *testing.T) {
	w, m := open(t, bpfmaptest.Root(t))
	const fe = "10.96.0.10:80/TCP"
	if err := w.UpsertService(svc("10.96.0.10:80", "10.0.1.1:8080", "10.0.1.2:8080", "10.0.1.3:8080")); err != nil {
		t.Fatal(err)
	}
	before := dump(t, m)[fe]
	if !before.Master || before.Count != 3 || before.RevNATIndex == 0 {
		t.Fatalf("service %+v, want a master entry with 3 backends and a rev-NAT index", before)
	}
	// .2 leaves, .4 comes: .4 takes .2's slot, the others keep theirs.
	if err := w.UpsertService(svc("10.96.0.10:80", "10.0.1.1:8080", "10.0.1.3:8080", "10.0.1.4:8080")); err != nil {
		t.Fatal(err)
	}
	after := dump(t, m)[fe]
	if got, want := slotAddrs(after), []string{"10.0.1.1:8080", "10.0.1.4:8080", "10.0.1.3:8080"}; !slices.Equal(got, want) {
		t.Errorf("slots %v, want %v", got, want)
	}
	bi, ai := backendIDs(before), backendIDs(after)
	if ai["10.0.1.1:8080"] != bi["10.0.1.1:8080"] || ai["10.0.1.3:8080"] != bi["10.0.1.3:8080"] {
		t.Errorf("backend ids changed: before %v, after %v", bi, ai)
	}
	if after.RevNATIndex != before.RevNATIndex {
		t.Errorf("rev-NAT index %d, was %d", after.RevNATIndex, before.RevNATIndex)
	}
	// Shrink: the last slot goes, the count follows.
	if err := w.UpsertService(svc("10.96.0.10:80", "10.0.1.4:8080")); err != nil {
		t.Fatal(err)
	}
	if got := dump(t, m)[fe]; got.Count != 1 || !slices.Equal(slotAddrs(got), []string{"10.0.1.4:8080"}) {
		t.Errorf("after shrinking: count %d slots %v, want 1 [10.0.1.4:8080]", got.Count, slotAddrs(got))
	}
}

func TestTerminatingBackendKeptOutOfSlots(t *testing.T) {
	w, m := open(t, bpfmaptest.Root(t))
	if err := w.UpsertService(svc("10.96.0.10:80", "10.0.1.1:8080", "~10.0.1.2:8080")); err != nil {
		t.Fatal(err)
	}
	s := dump(t, m)["10.96.0.10:80/TCP"]
	if s.Count != 1 || !slices.Equal(slotAddrs(s), []string{"10.0.1.1:8080"}) {
		t.Errorf("slots %v count %d, want only the active backend", slotAddrs(s), s.Count)
	}
	if n := countBackends(t, m); n != 2 {
		t.Errorf("%d backend entries, want 2 (the terminating one kept for its established flows)", n)
	}
}

func countBackends(t *testing.T, m *lbmap.Maps) int {
	t.Helper()
	n, err := m.CountBackends()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestSharedBackendWrittenOnce(t *testing.T) {
	w, m := open(t, bpfmaptest.Root(t))
	if err := w.UpsertService(svc("10.96.0.10:80", "10.0.1.1:8080", "10.0.1.2:8080")); err != nil {
		t.Fatal(err)
	}
	if err := w.UpsertService(svc("10.96.0.11:80", "10.0.1.1:8080")); err != nil {
		t.Fatal(err)
	}
	d := dump(t, m)
	if a, b := backendIDs(d["10.96.0.10:80/TCP"])["10.0.1.1:8080"], backendIDs(d["10.96.0.11:80/TCP"])["10.0.1.1:8080"]; a != b || a == 0 {
		t.Errorf("shared backend has ids %d and %d, want one", a, b)
	}
	if d["10.96.0.10:80/TCP"].RevNATIndex == d["10.96.0.11:80/TCP"].RevNATIndex {
		t.Error("two services share a rev-NAT index")
	}
	if n := countBackends(t, m); n != 2 {
		t.Errorf("%d backend entries, want 2", n)
	}
	if err := w.DeleteService(l3n4("10.96.0.10:80", datapath.ProtoTCP)); err != nil {
		t.Fatal(err)
	}
	if n := countBackends(t, m); n != 1 {
		t.Errorf("%d backend entries after deleting a service, want 1 (the shared one stays)", n)
	}
	if err := w.DeleteService(l3n4("10.96.0.11:80", datapath.ProtoTCP)); err != nil {
		t.Fatal(err)
	}
	if err := w.DeleteService(l3n4("10.96.0.11:80", datapath.ProtoTCP)); err != nil {
		t.Errorf("deleting a deleted service: %v", err)
	}
	if d, n := dump(t, m), countBackends(t, m); len(d) != 0 || n != 0 {
		t.Errorf("after deleting both: %d services, %d backends; want none", len(d), n)
	}
}

func TestRestartKeepsIDsAndReconcileRemovesStale(t *testing.T) {
	root := bpfmaptest.Root(t)
	w, m := open(t, root)
	web := svc("10.96.0.10:80", "10.0.1.1:8080", "10.0.1.2:8080")
	web.SessionAffinityTimeout = 3 * time.Hour
	db := svc("[fd00::10]:5432", "[fd00::1:1]:5432")
	for _, s := range []datapath.LBService{web, db, svc("10.96.0.12:53", "10.0.1.9:53")} {
		if err := w.UpsertService(s); err != nil {
			t.Fatal(err)
		}
	}
	before := dump(t, m)
	w.Close()

	w2, _ := open(t, root)
	added, removed, err := w2.ReconcileServices(slices.Values([]datapath.LBService{web, db}))
	if err != nil || added != 0 || removed != 1 {
		t.Fatalf("ReconcileServices = %d added, %d removed, %v; want 0, 1", added, removed, err)
	}
	after := dump(t, m)
	if len(after) != 2 {
		t.Fatalf("services after reconcile: %v", after)
	}
	for fe, s := range after {
		b := before[fe]
		if s.RevNATIndex != b.RevNATIndex || !maps(backendIDs(s), backendIDs(b)) {
			t.Errorf("%s: rev-NAT %d ids %v after restart, were %d %v", fe, s.RevNATIndex, backendIDs(s), b.RevNATIndex, backendIDs(b))
		}
	}
	if s := after["10.96.0.10:80/TCP"]; s.Flags&lbmap.FlagAffinity == 0 || s.AffinityTimeout != 3*3600 {
		t.Errorf("affinity flags %#x timeout %d, want affinity of 10800 s", s.Flags, s.AffinityTimeout)
	}
	if n := countBackends(t, m); n != 3 {
		t.Errorf("%d backends after reconcile, want 3 (the stale service's one removed)", n)
	}
	// A new service after the restart gets ids not in use.
	if err := w2.UpsertService(svc("10.96.0.13:80", "10.0.1.7:80")); err != nil {
		t.Fatal(err)
	}
	ns := dump(t, m)["10.96.0.13:80/TCP"]
	for fe, s := range after {
		if s.RevNATIndex == ns.RevNATIndex {
			t.Errorf("new service took rev-NAT index %d of %s", ns.RevNATIndex, fe)
		}
	}
}

func maps(a, b map[string]uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestBadServicesRefusedWhole(t *testing.T) {
	w, m := open(t, bpfmaptest.Root(t))
	mixed := svc("10.96.0.10:80", "[fd00::1]:80")
	dup := svc("10.96.0.10:80", "10.0.1.1:80", "10.0.1.1:80")
	noPort := svc("10.96.0.10:0", "10.0.1.1:80")
	badType := svc("10.96.0.10:80", "10.0.1.1:80")
	badType.Type = "Headless"
	anyAddr := svc("0.0.0.0:80", "10.0.1.1:80") // ClusterIP
	tests := []struct {
		name string
		give datapath.LBService
		want string
	}{
		{"family", mixed, "backends[0]"},
		{"duplicate", dup, "backends[1]"},
		{"port", noPort, "frontend port"},
		{"type", badType, "type"},
		{"unspecified ClusterIP", anyAddr, "only a NodePort or HostPort frontend"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := w.UpsertService(tt.give)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("UpsertService = %v, want an error naming %q", err, tt.want)
			}
			_, _, err = w.ReconcileServices(slices.Values([]datapath.LBService{svc("10.96.0.20:80", "10.0.1.1:80"), tt.give}))
			if err == nil {
				t.Fatal("ReconcileServices with a bad service succeeded")
			}
			if d := dump(t, m); len(d) != 0 {
				t.Errorf("maps hold %v after refused input", d)
			}
		})
	}
}

// TestAffinityMatches: a service with session affinity has a match entry
// per backend, which follows its backends, goes when affinity is turned
// off, and is rebuilt from the maps after a restart.
func TestAffinityMatches(t *testing.T) {
	root := bpfmaptest.Root(t)
	w, m := open(t, root)
	s := svc("10.96.0.10:80", "10.0.1.1:80", "10.0.1.2:80")
	s.SessionAffinityTimeout = time.Minute
	count := func() int {
		t.Helper()
		got, err := m.AffinityMatches()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, ids := range got {
			n += len(ids)
		}
		return n
	}
	if err := w.UpsertService(s); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 2 {
		t.Fatalf("%d affinity match entries, want 2", n)
	}
	s.Backends = s.Backends[:1]
	if err := w.UpsertService(s); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 1 {
		t.Errorf("%d affinity match entries after a backend left, want 1", n)
	}
	w.Close()
	w2, _ := open(t, root)
	s.SessionAffinityTimeout = 0
	if _, _, err := w2.ReconcileServices(slices.Values([]datapath.LBService{s})); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 0 {
		t.Errorf("%d affinity match entries after affinity was turned off (after a restart), want 0", n)
	}
}

// TestReconcileFromEmptyEqualsUpserts: the batched path of a reconcile
// into empty maps writes what one UpsertService per service writes.
// upsertEach writes svcs with one UpsertService each into new maps: what
// a batched write of them is compared with.
func upsertEach(t *testing.T, svcs []datapath.LBService) *lbmap.Maps {
	t.Helper()
	w, m := open(t, bpfmaptest.Root(t))
	for _, s := range svcs {
		if err := w.UpsertService(s); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func TestReconcileFromEmptyEqualsUpserts(t *testing.T) {
	web := svc("10.96.0.10:80", "10.0.1.1:8080", "~10.0.1.2:8080", "10.0.1.3:8080")
	web.SessionAffinityTimeout = time.Minute
	shared := svc("10.96.0.11:80", "10.0.1.1:8080", "10.0.1.2:8080")
	v6 := svc("[fd00::10]:443", "[fd00::1:1]:8443", "[fd00::1:2]:8443")
	v6.Type = datapath.SVCTypeNodePort
	empty := svc("10.96.0.12:53")
	svcs := []datapath.LBService{web, shared, v6, empty}

	bulkW, bulkM := open(t, bpfmaptest.Root(t))
	added, removed, err := bulkW.ReconcileServices(slices.Values(svcs))
	if err != nil || added != 4 || removed != 0 {
		t.Fatalf("ReconcileServices from empty = %d, %d, %v; want 4 added", added, removed, err)
	}
	oneM := upsertEach(t, svcs)
	shape := func(m *lbmap.Maps) map[string]string {
		out := map[string]string{}
		for fe, s := range dump(t, m) {
			out[fe] = fmt.Sprintf("master=%v count=%d flags=%#x affinity=%d slots=%v", s.Master, s.Count, s.Flags, s.AffinityTimeout, slotAddrs(s))
		}
		return out
	}
	if a, b := shape(bulkM), shape(oneM); !reflect.DeepEqual(a, b) {
		t.Errorf("batched reconcile wrote\n%v\none upsert per service wrote\n%v", a, b)
	}
	for _, m := range []*lbmap.Maps{bulkM, oneM} {
		if n := countBackends(t, m); n != 5 {
			t.Errorf("%d backends, want 5 (the shared ones once)", n)
		}
		matches, _ := m.AffinityMatches()
		if len(matches) != 1 || len(matches[dump(t, m)["10.96.0.10:80/TCP"].RevNATIndex]) != 2 {
			t.Errorf("affinity matches %v, want web's 2 active backends", matches)
		}
	}
	// The bulk-written state is the writer's own: a change is minimal.
	web.Backends = web.Backends[:1]
	if err := bulkW.UpsertService(web); err != nil {
		t.Fatal(err)
	}
	if got := dump(t, bulkM)["10.96.0.10:80/TCP"]; got.Count != 1 || countBackends(t, bulkM) != 4 {
		t.Errorf("after shrinking web: %+v, %d backends; want 1 slot, 4 backends (10.0.1.3 gone, 10.0.1.2 kept for shared)", got, countBackends(t, bulkM))
	}
}

// TestChanges: an upsert or delete that writes a map entry counts; one
// that finds the maps as asked does not.
func TestChanges(t *testing.T) {
	w, _ := open(t, bpfmaptest.Root(t))
	step := func(what string, fn func() error, want uint64) {
		t.Helper()
		if err := fn(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := w.Changes(); got != want {
			t.Errorf("after %s: Changes = %d, want %d", what, got, want)
		}
	}
	step("a new service", func() error { return w.UpsertService(svc("10.96.0.10:80", "10.0.1.1:8080")) }, 1)
	step("the same again", func() error { return w.UpsertService(svc("10.96.0.10:80", "10.0.1.1:8080")) }, 1)
	step("a backend terminating", func() error { return w.UpsertService(svc("10.96.0.10:80", "~10.0.1.1:8080")) }, 2)
	step("a frontend never written deleted", func() error { return w.DeleteService(l3n4("10.96.0.11:80", datapath.ProtoTCP)) }, 2)
	step("the service deleted", func() error { return w.DeleteService(l3n4("10.96.0.10:80", datapath.ProtoTCP)) }, 3)
}

// TestNodePortSurrogate: the unspecified address of a NodePort (what
// svcmanager.Desired hands over beside one frontend per node address,
// as Cilium writes it) is a frontend like the others, IPv4 and IPv6.
func TestNodePortSurrogate(t *testing.T) {
	w, m := open(t, bpfmaptest.Root(t))
	var svcs []datapath.LBService
	for _, fe := range []string{"0.0.0.0:30080", "192.0.2.10:30080", "[::]:30080"} {
		s := svc(fe, "10.0.1.1:8080")
		if strings.HasPrefix(fe, "[") {
			s = svc(fe, "[fd00::1]:8080")
		}
		s.Type = datapath.SVCTypeNodePort
		svcs = append(svcs, s)
	}
	if _, _, err := w.ReconcileServices(slices.Values(svcs)); err != nil {
		t.Fatal(err)
	}
	d := dump(t, m)
	for _, fe := range []string{"0.0.0.0:30080/TCP", "192.0.2.10:30080/TCP", "[::]:30080/TCP"} {
		if s, ok := d[fe]; !ok || len(slotAddrs(s)) != 1 {
			t.Errorf("maps hold %v, want %s with one backend", d, fe)
		}
	}
	if err := w.DeleteService(svcs[0].Frontend); err != nil {
		t.Fatal(err)
	}
	if _, ok := dump(t, m)["0.0.0.0:30080/TCP"]; ok {
		t.Error("the surrogate frontend is still there after DeleteService")
	}
}

// TestWritesWhatDesiredMakes: every kind of frontend svcmanager.Desired
// makes of a Kubernetes Service (ClusterIPs of both families, the
// NodePort's unspecified address and one per node address, external
// IPs, LoadBalancer ingress), through a manager as the agent wires them,
// reaches the maps whole: the writer refuses none of them.
func TestWritesWhatDesiredMakes(t *testing.T) {
	w, m := open(t, bpfmaptest.Root(t))
	tcp, port, name := corev1.ProtocolTCP, int32(8080), "http"
	k8s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIP: "10.96.0.10", ClusterIPs: []string{"10.96.0.10", "fd00::10"},
			IPFamilies:  []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol},
			ExternalIPs: []string{"198.51.100.7"},
			Ports:       []corev1.ServicePort{{Name: "http", Port: 80, Protocol: tcp, NodePort: 30080}}},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "203.0.113.9"}}}}}
	var sls []*discoveryv1.EndpointSlice
	for _, fam := range []struct {
		t    discoveryv1.AddressType
		addr string
	}{{discoveryv1.AddressTypeIPv4, "10.0.1.1"}, {discoveryv1.AddressTypeIPv6, "fd00:1::1"}} {
		sls = append(sls, &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-" + string(fam.t)},
			AddressType: fam.t, Ports: []discoveryv1.EndpointPort{{Name: &name, Port: &port, Protocol: &tcp}},
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{fam.addr}}}})
	}
	node := svcmanager.Node{Name: "node1", Addrs: []netip.Addr{netip.MustParseAddr("192.0.2.10"), netip.MustParseAddr("2001:db8::10")}}
	mgr := svcmanager.New(w, node, slog.New(slog.DiscardHandler))
	mgr.Upsert(svcmanager.SourceKubernetes, svcmanager.FromKubernetes(k8s, sls))
	if err := mgr.Reconcile(); err != nil {
		t.Fatal(err)
	}
	want := svcmanager.Desired(svcmanager.FromKubernetes(k8s, sls), nil, node)
	// 2 ClusterIPs, 4 NodePorts (unspecified and node address, each
	// family), 1 external IP, 1 LoadBalancer ingress.
	if len(want) != 8 {
		t.Fatalf("Desired makes %d frontends, want 8: %v", len(want), want)
	}
	d := dump(t, m)
	for _, lb := range want {
		if _, ok := d[lb.Frontend.String()]; !ok {
			t.Errorf("the maps lack %s %s (they hold %d frontends)", lb.Type, lb.Frontend, len(d))
		}
	}
	if len(d) != len(want) {
		t.Errorf("the maps hold %d frontends, Desired makes %d", len(d), len(want))
	}
	if st := mgr.Stats(); st.Failures > 0 {
		t.Errorf("the manager's writes failed: %v", st.LastError)
	}
}
