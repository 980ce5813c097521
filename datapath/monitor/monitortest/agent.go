package monitortest

import (
	"context"
	"net/netip"
	"path/filepath"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/hive"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/statedir"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/bpfapi"
	"github.com/apiary-net/apiary/datapath/loader"
	"github.com/apiary-net/apiary/datapath/loader/loadercell"
	"github.com/apiary-net/apiary/datapath/loader/testpkt"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	"github.com/apiary-net/apiary/datapath/maps/ipcachemap"
	"github.com/apiary-net/apiary/datapath/monitor/monitorcell"
	"github.com/apiary-net/apiary/kvstore/kvstorecell"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/identity/identitycell"
	"github.com/apiary-net/apiary/policy/labels"
)

// Agent is a running hive with the monitor and the BPF API.
type Agent struct {
	Hive   *hive.Hive
	Socket string
	Client *client.Client
	Root   string // the bpffs root
	Loader *loader.Loader
	Alloc  identity.Allocator
}

// Start starts the agent; it stops when the test ends. It skips the
// test when the machine cannot load BPF programs.
func Start(t testing.TB) *Agent {
	t.Helper()
	a := &Agent{Root: bpfmaptest.Root(t)}
	a.start(t, []string{"bpf-root=" + a.Root}, loadercell.Cell, celltest.Capture(&a.Loader))
	return a
}

// StartWith is Start with more flags ("name=value") and cells (the
// hubble cell's tests add it).
func StartWith(t testing.TB, flags []string, extra ...cell.Cell) *Agent {
	t.Helper()
	a := &Agent{Root: bpfmaptest.Root(t)}
	a.start(t, append([]string{"bpf-root=" + a.Root}, flags...), append([]cell.Cell{loadercell.Cell, celltest.Capture(&a.Loader)}, extra...)...)
	return a
}

// StartWithoutDatapath starts the agent without the BPF loader (an
// agent on another datapath): no BPF needed.
func StartWithoutDatapath(t testing.TB) *Agent {
	t.Helper()
	a := &Agent{}
	a.start(t, nil)
	return a
}

func (a *Agent) start(t testing.TB, flags []string, extra ...cell.Cell) {
	t.Helper()
	dir := t.TempDir()
	a.Socket = filepath.Join(dir, "apiary.sock")
	flags = append(flags, "socket-path="+a.Socket, "state-dir="+filepath.Join(dir, "state"),
		"cluster-name=c1", "cluster-id=1", "node-name=node-a", "node-ip=192.0.2.10")
	cells := []cell.Cell{api.Cell, localnode.Cell, statedir.Cell, kvstorecell.Cell, store.Cell, identitycell.Cell,
		monitorcell.Cell, bpfapi.Cell, celltest.Capture(&a.Alloc)}
	a.Hive = celltest.StartWithFlags(t, flags, append(cells, extra...)...)
	a.Client = client.New(a.Socket)
	t.Cleanup(a.Client.Close)
}

// Scene is one endpoint (EndpointID, "k8s:app=web", 10.0.0.7) with a
// policy that lets "k8s:app=client" (10.0.1.1) in on TCP port 80,
// TCP ports 8080-8087 and ICMP echo requests, and denies "k8s:app=db"
// (10.0.1.2) everything, its programs loaded and its maps filled.
type Scene struct {
	EndpointID      uint16
	Web, Client, DB *identity.Identity
	WebIP, ClientIP netip.Addr
	DBIP            netip.Addr
	Programs        *loader.Programs
}

// EndpointID is the scene's endpoint.
const EndpointID uint16 = 7

// NewScene allocates the identities, fills the ipcache and policy maps
// and loads the endpoint's programs.
func (a *Agent) NewScene(t testing.TB) *Scene {
	t.Helper()
	s := &Scene{
		EndpointID: EndpointID,
		WebIP:      netip.MustParseAddr("10.0.0.7"), ClientIP: netip.MustParseAddr("10.0.1.1"), DBIP: netip.MustParseAddr("10.0.1.2"),
	}
	s.Web, s.Client, s.DB = a.identity(t, "k8s:app=web"), a.identity(t, "k8s:app=client"), a.identity(t, "k8s:app=db")
	im, err := ipcachemap.Open(celltest.Logger(t), a.Root)
	if err != nil {
		t.Fatal(err)
	}
	defer im.Close()
	for ip, id := range map[netip.Addr]identity.NumericIdentity{s.WebIP: s.Web.ID, s.ClientIP: s.Client.ID, s.DBIP: s.DB.ID} {
		if err := im.Upsert(netip.PrefixFrom(ip, 32), id); err != nil {
			t.Fatal(err)
		}
	}
	pm, err := a.Loader.PolicyMap(s.EndpointID)
	if err != nil {
		t.Fatal(err)
	}
	defer pm.Close()
	in := func(id identity.NumericIdentity, proto policy.Proto, port uint16, plen uint8) policy.Key {
		return policy.Key{Identity: id, Direction: policy.Ingress, Proto: proto, Port: port, PrefixLen: plen}
	}
	ms := policy.MapState{
		in(s.Client.ID, policy.ProtoTCP, 80, 16):   {},
		in(s.Client.ID, policy.ProtoTCP, 8080, 13): {},
		in(s.Client.ID, policy.ProtoICMP, 8, 16):   {},
		in(s.DB.ID, policy.ProtoAny, 0, 0):         {Deny: true},
		{Direction: policy.Egress}:                 {}, // egress: anything
	}
	if _, _, err := pm.Sync(ms); err != nil {
		t.Fatal(err)
	}
	s.Programs, err = a.Loader.Load(datapath.EndpointSpec{ID: datapath.EndpointID(s.EndpointID), Identity: s.Web.ID, IngressEnforcement: true, EgressEnforcement: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Programs.Close() })
	return s
}

func (a *Agent) identity(t testing.TB, label string) *identity.Identity {
	t.Helper()
	ls, err := labels.ParseList("k8s", label)
	if err != nil {
		t.Fatal(err)
	}
	id, _, err := a.Alloc.AllocateIdentity(context.Background(), ls)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TC verdicts of the programs.
const (
	ActOK   = 0
	ActShot = 2
)

// Ingress sends p to the endpoint (its to_container program) and
// returns the tc verdict.
func (s *Scene) Ingress(t testing.TB, p testpkt.Packet) uint32 {
	t.Helper()
	ret, err := s.Programs.ToContainer.Run(&ebpf.RunOptions{Data: p.MustFrame()})
	if err != nil {
		t.Fatalf("BPF_PROG_TEST_RUN: %v", err)
	}
	return ret
}

// AllowedTCP is a new TCP flow the policy allows: client -> web:80.
func (s *Scene) AllowedTCP() testpkt.Packet {
	return testpkt.Packet{Src: s.ClientIP, Dst: s.WebIP, Proto: testpkt.ProtoTCP, Sport: 40000, Dport: 80}
}

// DeniedTCP is a new TCP flow the policy denies: client -> web:22.
func (s *Scene) DeniedTCP() testpkt.Packet {
	return testpkt.Packet{Src: s.ClientIP, Dst: s.WebIP, Proto: testpkt.ProtoTCP, Sport: 40001, Dport: 22}
}

// Labels returns id's labels as the API shows them.
func Labels(id *identity.Identity) []string {
	out := make([]string, 0, len(id.Labels))
	for _, l := range id.Labels {
		out = append(out, l.String())
	}
	return out
}
