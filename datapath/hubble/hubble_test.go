package hubble_test

import (
	"context"
	"io"
	"net"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/hubble"
	"github.com/apiary-net/apiary/datapath/hubble/api/flow"
	"github.com/apiary-net/apiary/datapath/hubble/api/observer"
	peerpb "github.com/apiary-net/apiary/datapath/hubble/api/peer"
	"github.com/apiary-net/apiary/datapath/maps/eventsmap"
	"github.com/apiary-net/apiary/datapath/monitor"
	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/labels"
)

type podTable map[netip.Addr]hubble.EndpointInfo

func (p podTable) LookupIP(ip netip.Addr) (hubble.EndpointInfo, bool) {
	i, ok := p[ip]
	return i, ok
}

var (
	webIP, clientIP = netip.MustParseAddr("10.0.0.7"), netip.MustParseAddr("10.0.1.1")
	pods            = podTable{
		webIP:    {EndpointID: 7, Namespace: "shop", PodName: "web-0", Workloads: []hubble.Workload{{Kind: "StatefulSet", Name: "web"}}},
		clientIP: {Namespace: "shop", PodName: "client-1"},
	}
	parser = &hubble.Parser{NodeName: "c1/node-a", ClusterName: "c1", Endpoints: pods}
)

// reply is the web pod's SYN-ACK to the client (egress, a reply).
func reply(t *testing.T) *flow.Flow {
	t.Helper()
	f, err := parser.Decode(monitor.Event{Event: eventsmap.Event{
		Type: eventsmap.TypeTrace, CTState: eventsmap.CTReply, Direction: policy.Egress, EndpointID: 7,
		SrcIdentity: 1000, DstIdentity: 2001, Proto: policy.ProtoTCP, TCPFlags: 0x12,
		Src: netip.AddrPortFrom(webIP, 80), Dst: netip.AddrPortFrom(clientIP, 40000),
	}, Time: time.Unix(100, 0), SrcLabels: labels.Labels{{Source: "k8s", Key: "app", Value: "web"}}})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestParseReply(t *testing.T) {
	f := reply(t)
	if f.GetTrafficDirection() != flow.TrafficDirection_INGRESS || !f.GetIsReply().GetValue() || !f.GetReply() ||
		f.GetTraceObservationPoint() != flow.TraceObservationPoint_TO_STACK || f.GetEventType().GetSubType() != 3 ||
		f.GetTraceReason() != flow.TraceReason_REPLY || f.GetSummary() != "TCP Flags: SYN, ACK" {
		t.Errorf("reply flow %v", f)
	}
	src := f.GetSource()
	if src.GetID() != 7 || src.GetPodName() != "web-0" || src.GetNamespace() != "shop" || src.GetClusterName() != "c1" ||
		len(src.GetWorkloads()) != 1 || src.GetWorkloads()[0].GetKind() != "StatefulSet" || src.GetLabels()[0] != "k8s:app=web" {
		t.Errorf("source %v", src)
	}
	if f.GetL4().GetTCP().GetSourcePort() != 80 || !f.GetL4().GetTCP().GetFlags().GetACK() || f.GetIP().GetIpVersion() != flow.IPVersion_IPv4 {
		t.Errorf("l4 %v", f.GetL4())
	}
}

// frontends is a service manager's frontends: address -> namespace/name.
type frontends map[datapath.L3n4Addr]string

func (fs frontends) ServiceAt(a datapath.L3n4Addr) (string, string, bool) {
	ns, name, ok := strings.Cut(fs[a], "/")
	return ns, name, ok
}

// countedFrontends counts the lookups of frontends.
type countedFrontends struct {
	frontends
	n *int
}

func (c countedFrontends) ServiceAt(a datapath.L3n4Addr) (string, string, bool) {
	*c.n++
	return c.frontends.ServiceAt(a)
}

// revNATs are the rev-NAT entries of the load-balancing maps.
type revNATs map[uint16]netip.AddrPort

func (r revNATs) RevNATFrontend(idx uint16, v4 bool) (netip.AddrPort, bool) {
	ap, ok := r[idx]
	return ap, ok && ap.Addr().Is4() == v4
}

// TestParseServices: the ends of a flow that are service frontends are
// named as Cilium's Hubble names them: a frontend of the flow's
// protocol, else TCP's, else UDP's; the IPv6 and IPv4-mapped ends too.
func TestParseServices(t *testing.T) {
	fe := func(a string, port uint16, proto uint8) datapath.L3n4Addr {
		return datapath.L3n4Addr{Addr: netip.MustParseAddr(a), Port: port, Proto: proto}
	}
	p := &hubble.Parser{NodeName: "c1/node-a", Services: frontends{
		fe("10.96.0.10", 53, datapath.ProtoUDP):     "kube-system/kube-dns",
		fe("10.96.0.10", 9153, datapath.ProtoTCP):   "kube-system/kube-dns-metrics",
		fe("10.96.0.20", 80, datapath.ProtoTCP):     "shop/web",
		fe("10.96.0.30", 38412, datapath.ProtoSCTP): "core/amf",
		fe("10.96.0.30", 38412, datapath.ProtoTCP):  "core/amf-tcp",
		fe("fd00:96::20", 443, datapath.ProtoTCP):   "shop/web6",
	}}
	name := func(s *flow.Service) string {
		if s == nil {
			return ""
		}
		return s.GetNamespace() + "/" + s.GetName()
	}
	for _, tc := range []struct {
		name     string
		proto    policy.Proto
		src, dst netip.AddrPort
		from, to string
	}{
		{"a reply from a ClusterIP", policy.ProtoTCP, netip.MustParseAddrPort("10.96.0.20:80"), netip.MustParseAddrPort("10.0.1.1:40000"), "shop/web", ""},
		{"to a ClusterIP", policy.ProtoUDP, netip.MustParseAddrPort("10.0.1.1:40000"), netip.MustParseAddrPort("10.96.0.10:53"), "", "kube-system/kube-dns"},
		{"the flow's protocol first", policy.ProtoSCTP, netip.MustParseAddrPort("10.0.1.1:40000"), netip.MustParseAddrPort("10.96.0.30:38412"), "", "core/amf"},
		{"TCP's else", policy.ProtoICMP, netip.MustParseAddrPort("10.0.1.1:0"), netip.MustParseAddrPort("10.96.0.10:9153"), "", "kube-system/kube-dns-metrics"},
		{"UDP's last", policy.ProtoICMP, netip.MustParseAddrPort("10.0.1.1:0"), netip.MustParseAddrPort("10.96.0.10:53"), "", "kube-system/kube-dns"},
		{"IPv6", policy.ProtoTCP, netip.MustParseAddrPort("[fd00::1]:40000"), netip.MustParseAddrPort("[fd00:96::20]:443"), "", "shop/web6"},
		{"IPv4-mapped", policy.ProtoTCP, netip.MustParseAddrPort("[::ffff:10.96.0.20]:80"), netip.MustParseAddrPort("10.0.1.1:40000"), "shop/web", ""},
		{"a backend is no frontend", policy.ProtoTCP, netip.MustParseAddrPort("10.0.1.1:40000"), netip.MustParseAddrPort("10.0.0.7:8080"), "", ""},
		{"another port", policy.ProtoTCP, netip.MustParseAddrPort("10.0.1.1:40000"), netip.MustParseAddrPort("10.96.0.20:81"), "", ""},
	} {
		f, err := p.Decode(monitor.Event{Event: eventsmap.Event{Type: eventsmap.TypeTrace, Direction: policy.Egress, Proto: tc.proto, Src: tc.src, Dst: tc.dst}})
		if err != nil {
			t.Fatal(err)
		}
		if from, to := name(f.GetSourceService()), name(f.GetDestinationService()); from != tc.from || to != tc.to {
			t.Errorf("%s: services %q -> %q, want %q -> %q", tc.name, from, to, tc.from, tc.to)
		}
	}
	// An end that is no frontend costs one lookup per protocol tried:
	// TCP, then UDP (TCP is not looked up twice for a TCP or ICMP flow).
	lookups := 0
	counted := &hubble.Parser{NodeName: "c1/node-a", Services: countedFrontends{p.Services.(frontends), &lookups}}
	for _, proto := range []policy.Proto{policy.ProtoTCP, policy.ProtoICMP} {
		lookups = 0
		ev := eventsmap.Event{Type: eventsmap.TypeTrace, Direction: policy.Egress, Proto: proto,
			Src: netip.MustParseAddrPort("10.0.1.1:40000"), Dst: netip.MustParseAddrPort("10.0.0.7:8080")}
		if _, err := counted.Decode(monitor.Event{Event: ev}); err != nil {
			t.Fatal(err)
		}
		if lookups != 4 {
			t.Errorf("protocol %d: %d frontend lookups for two ends, want 4", proto, lookups)
		}
	}

	// A translated packet names the service it went through by its
	// rev-NAT index: the destination of a request, the source of a
	// reply; an end that is a frontend itself keeps that name.
	p.RevNATs = revNATs{7: netip.MustParseAddrPort("10.96.0.20:80"), 9: netip.MustParseAddrPort("[fd00:96::20]:443")}
	for _, tc := range []struct {
		name     string
		ev       eventsmap.Event
		from, to string
	}{
		{"a request", eventsmap.Event{RevNAT: 7, Src: netip.MustParseAddrPort("10.0.1.1:40000"), Dst: netip.MustParseAddrPort("10.0.0.7:8080")}, "", "shop/web"},
		{"a reply", eventsmap.Event{RevNAT: 7, ServiceIsSource: true, Src: netip.MustParseAddrPort("10.0.0.7:8080"), Dst: netip.MustParseAddrPort("10.0.1.1:40000")}, "shop/web", ""},
		{"IPv6", eventsmap.Event{RevNAT: 9, Src: netip.MustParseAddrPort("[fd00::1]:40000"), Dst: netip.MustParseAddrPort("[fd00::7]:8443")}, "", "shop/web6"},
		{"an index the maps do not have", eventsmap.Event{RevNAT: 8, Src: netip.MustParseAddrPort("10.0.1.1:40000"), Dst: netip.MustParseAddrPort("10.0.0.7:8080")}, "", ""},
		{"the frontend's own name first", eventsmap.Event{RevNAT: 9, Src: netip.MustParseAddrPort("10.0.1.1:40000"), Dst: netip.MustParseAddrPort("10.96.0.10:9153")}, "", "kube-system/kube-dns-metrics"},
	} {
		tc.ev.Type, tc.ev.Proto = eventsmap.TypeTrace, policy.ProtoTCP
		f, err := p.Decode(monitor.Event{Event: tc.ev})
		if err != nil {
			t.Fatal(err)
		}
		if from, to := name(f.GetSourceService()), name(f.GetDestinationService()); from != tc.from || to != tc.to {
			t.Errorf("%s: services %q -> %q, want %q -> %q", tc.name, from, to, tc.from, tc.to)
		}
	}
	if f := reply(t); f.GetSourceService() != nil || f.GetDestinationService() != nil {
		t.Errorf("a parser without services named %v, %v", f.GetSourceService(), f.GetDestinationService())
	}
}

func TestFilters(t *testing.T) {
	f := reply(t)
	f.SourceService = &flow.Service{Namespace: "shop", Name: "web"}
	for _, tc := range []struct {
		name string
		give *flow.FlowFilter
		want bool
	}{
		{"pod prefix", &flow.FlowFilter{SourcePod: []string{"shop/web"}}, true},
		{"namespace only", &flow.FlowFilter{DestinationPod: []string{"shop/"}}, true},
		{"no namespace means default", &flow.FlowFilter{SourcePod: []string{"web"}}, false},
		{"label", &flow.FlowFilter{SourceLabel: []string{"k8s:app=web"}}, true},
		{"label any source", &flow.FlowFilter{SourceLabel: []string{"app=web"}}, true},
		{"label negated", &flow.FlowFilter{SourceLabel: []string{"!app"}}, false},
		{"cidr", &flow.FlowFilter{DestinationIp: []string{"10.0.1.0/24"}}, true},
		{"port", &flow.FlowFilter{SourcePort: []string{"80"}, Protocol: []string{"TCP"}}, true},
		{"wrong port", &flow.FlowFilter{DestinationPort: []string{"80"}}, false},
		{"reply", &flow.FlowFilter{Reply: []bool{true}}, true},
		{"verdict", &flow.FlowFilter{Verdict: []flow.Verdict{flow.Verdict_DROPPED}}, false},
		{"direction", &flow.FlowFilter{TrafficDirection: []flow.TrafficDirection{flow.TrafficDirection_INGRESS}}, true},
		{"event type", &flow.FlowFilter{EventType: []*flow.EventTypeFilter{{Type: 4, MatchSubType: true, SubType: 3}}}, true},
		{"identity", &flow.FlowFilter{SourceIdentity: []uint32{1000}, DestinationIdentity: []uint32{2001}}, true},
		{"tcp flags", &flow.FlowFilter{TcpFlags: []*flow.TCPFlags{{SYN: true, ACK: true}}}, true},
		{"node", &flow.FlowFilter{NodeName: []string{"c1/node-*"}}, true},
		{"workload", &flow.FlowFilter{SourceWorkload: []*flow.Workload{{Name: "web"}}}, true},
		{"all fields must match", &flow.FlowFilter{SourcePod: []string{"shop/web"}, DestinationPort: []string{"1"}}, false},
		{"service", &flow.FlowFilter{SourceService: []string{"shop/web"}}, true},
		{"an empty experimental part", &flow.FlowFilter{SourceService: []string{"shop/web"}, Experimental: &flow.FlowFilter_Experimental{}}, true},
		{"service prefix", &flow.FlowFilter{SourceService: []string{"shop/w"}}, true},
		{"service namespace", &flow.FlowFilter{SourceService: []string{"shop/"}}, true},
		{"service of another namespace", &flow.FlowFilter{SourceService: []string{"web"}}, false},
		{"no destination service", &flow.FlowFilter{DestinationService: []string{"shop/"}}, false},
		{"encrypted", &flow.FlowFilter{Encrypted: []bool{true}}, false},
		{"not encrypted", &flow.FlowFilter{Encrypted: []bool{false}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fl, err := hubble.CompileFilters([]*flow.FlowFilter{tc.give})
			if err != nil {
				t.Fatal(err)
			}
			if got := fl.Any(f); got != tc.want {
				t.Errorf("match = %v, want %v", got, tc.want)
			}
		})
	}
	for _, bad := range []*flow.FlowFilter{
		{SourceIp: []string{"10.0.0.300"}}, {DestinationPort: []string{"http"}}, {Protocol: []string{"gre"}},
		{SourcePod: []string{""}}, {SourceLabel: []string{"a,,b"}}, {DestinationService: []string{""}},
	} {
		if _, err := hubble.CompileFilters([]*flow.FlowFilter{bad}); err == nil {
			t.Errorf("filter %v accepted", bad)
		}
	}
	// Fields apiary's flows do not have are refused, naming the field:
	// taken as unset they would match every flow.
	for field, ff := range map[string]*flow.FlowFilter{
		"http_status_code": {HttpStatusCode: []string{"200"}}, "dns_query": {DnsQuery: []string{"example"}},
		"source_fqdn": {SourceFqdn: []string{"*.example.com"}}, "destination_fqdn": {DestinationFqdn: []string{"x"}},
		"uuid": {Uuid: []string{"x"}}, "interface": {Interface: []*flow.NetworkInterface{{Name: "eth0"}}},
		"http_method": {HttpMethod: []string{"GET"}}, "http_path": {HttpPath: []string{"/"}}, "http_url": {HttpUrl: []string{"x"}},
		"http_header": {HttpHeader: []*flow.HTTPHeader{{Key: "a"}}}, "node_labels": {NodeLabels: []string{"a=b"}},
		"trace_id": {TraceId: []string{"1"}}, "ip_trace_id": {IpTraceId: []uint64{1}}, "source_ip_xlated": {SourceIpXlated: []string{"10.0.0.1"}},
		"experimental.cel_expression": {Experimental: &flow.FlowFilter_Experimental{CelExpression: []string{"true"}}},
	} {
		if _, err := hubble.CompileFilters([]*flow.FlowFilter{{SourcePod: []string{"shop/"}}, ff}); err == nil || !strings.Contains(err.Error(), "filter 1: "+field+":") {
			t.Errorf("filter on %s: %v, want it refused naming the field", field, err)
		}
	}
	// A field of a newer Hubble (unknown to apiary's protobufs) is
	// refused too: field 999, varint 1.
	var ff flow.FlowFilter
	if err := proto.Unmarshal([]byte{0xb8, 0x3e, 0x01}, &ff); err != nil {
		t.Fatal(err)
	}
	if _, err := hubble.CompileFilters([]*flow.FlowFilter{&ff}); err == nil || !strings.Contains(err.Error(), "does not know") {
		t.Errorf("a filter with an unknown field: %v, want it refused", err)
	}
}

func TestRingOverwriteIsLost(t *testing.T) {
	r := hubble.NewRing(3)
	for i := range 5 {
		r.Write(hubble.Entry{Flow: &flow.Flow{Summary: string(rune('a' + i))}})
	}
	e, next, ok, err := r.Next(context.Background(), 0, false)
	if err != nil || !ok || e.Lost != 2 || e.LostSource != flow.LostEventSource_HUBBLE_RING_BUFFER || next != 2 {
		t.Errorf("reading overwritten entries: %+v next %d ok %v err %v, want 2 lost then 2", e, next, ok, err)
	}
	e, _, _, _ = r.Next(context.Background(), next, false)
	if e.Flow.GetSummary() != "c" {
		t.Errorf("oldest held %v, want c", e.Flow)
	}
	if held, seen := r.Counts(); held != 3 || seen != 5 {
		t.Errorf("counts %d/%d, want 3/5", held, seen)
	}
	for _, n := range []int{0, 4, 100, 65536} {
		if hubble.CheckCapacity(n) == nil {
			t.Errorf("capacity %d accepted", n)
		}
	}
}

// TestRingWriteAfterStop: the consumer's last flow may race the stop; it
// is kept, and a follower then reads it and the end.
func TestRingWriteAfterStop(t *testing.T) {
	r := hubble.NewRing(3)
	r.Stop()
	r.Write(hubble.Entry{Flow: &flow.Flow{Summary: "late"}})
	r.Stop()
	e, next, ok, err := r.Next(context.Background(), 0, true)
	if err != nil || !ok || e.Flow.GetSummary() != "late" {
		t.Fatalf("Next after stop = %+v, %v, %v; want the late flow", e, ok, err)
	}
	if _, _, _, err := r.Next(context.Background(), next, true); err != hubble.ErrRingStopped {
		t.Errorf("Next past the end = %v, want ErrRingStopped", err)
	}
}

// serve starts an Observer over r on a unix socket and returns a client.
func serve(t *testing.T, r *hubble.Ring) observer.ObserverClient {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hubble.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	observer.RegisterObserverServer(srv, &hubble.Observer{Ring: r, NodeName: "n", Started: time.Unix(0, 0), Now: func() time.Time { return time.Unix(200, 0) }})
	done := make(chan struct{})
	go func() { srv.Serve(l); close(done) }()
	conn, err := grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(); r.Stop(); srv.Stop(); <-done })
	return observer.NewObserverClient(conn)
}

func ports(t *testing.T, c observer.ObserverClient, req *observer.GetFlowsRequest) string {
	t.Helper()
	st, err := c.GetFlows(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for {
		resp, err := st.Recv()
		if err == io.EOF {
			return strings.Join(out, " ")
		}
		if err != nil {
			return "error: " + err.Error()
		}
		out = append(out, resp.GetFlow().GetSummary())
	}
}

func TestGetFlowsSelection(t *testing.T) {
	r := hubble.NewRing(15)
	for i := range 6 {
		v := flow.Verdict_FORWARDED
		if i%2 == 1 {
			v = flow.Verdict_DROPPED
		}
		r.Write(hubble.Entry{Flow: &flow.Flow{Summary: string(rune('a' + i)), Verdict: v, Time: timestamppb.New(time.Unix(int64(100+i), 0))}})
	}
	c := serve(t, r)
	dropped := []*flow.FlowFilter{{Verdict: []flow.Verdict{flow.Verdict_DROPPED}}}
	for _, tc := range []struct {
		name string
		give *observer.GetFlowsRequest
		want string
	}{
		{"all", &observer.GetFlowsRequest{}, "a b c d e f"},
		{"last 2", &observer.GetFlowsRequest{Number: 2}, "e f"},
		{"first 2", &observer.GetFlowsRequest{Number: 2, First: true}, "a b"},
		{"last 2 dropped", &observer.GetFlowsRequest{Number: 2, Whitelist: dropped}, "d f"},
		{"not dropped", &observer.GetFlowsRequest{Blacklist: dropped}, "a c e"},
		{"since until", &observer.GetFlowsRequest{Since: timestamppb.New(time.Unix(101, 0)), Until: timestamppb.New(time.Unix(103, 0))}, "b c d"},
		{"until before since", &observer.GetFlowsRequest{Since: timestamppb.New(time.Unix(103, 0)), Until: timestamppb.New(time.Unix(101, 0))}, "error: rpc error: code = InvalidArgument desc = until"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ports(t, c, tc.give); !strings.HasPrefix(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	st, err := c.ServerStatus(context.Background(), &observer.ServerStatusRequest{})
	if err != nil || st.NumFlows != 6 || st.MaxFlows != 15 || st.SeenFlows != 6 || st.UptimeNs != uint64(200*time.Second) {
		t.Errorf("status %v (%v)", st, err)
	}
}

func TestPeersStreamChanges(t *testing.T) {
	p := hubble.NewPeers()
	p.Upsert("c1/node-b", hubble.Peer{Address: "192.0.2.11:4244"})
	p.Upsert("c1/node-a", hubble.Peer{Address: "192.0.2.10:4244", TLSServerName: "node-a.c1.hubble-grpc.cilium.io"})
	path := filepath.Join(t.TempDir(), "peer.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	peerpb.RegisterPeerServer(srv, p)
	done := make(chan struct{})
	go func() { srv.Serve(l); close(done) }()
	defer func() { p.Stop(); srv.GracefulStop(); <-done }()
	conn, err := grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	st, err := peerpb.NewPeerClient(conn).Notify(context.Background(), &peerpb.NotifyRequest{})
	if err != nil {
		t.Fatal(err)
	}
	next := func() string {
		t.Helper()
		cn, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(cn.GetType().String() + " " + cn.GetName() + " " + cn.GetAddress() + " " + cn.GetTls().GetServerName())
	}
	for _, want := range []string{"PEER_ADDED c1/node-a 192.0.2.10:4244 node-a.c1.hubble-grpc.cilium.io", "PEER_ADDED c1/node-b 192.0.2.11:4244"} {
		if got := next(); got != want {
			t.Errorf("initial list: %q, want %q", got, want)
		}
	}
	p.Upsert("c1/node-b", hubble.Peer{Address: "192.0.2.12:4244"})
	p.Upsert("c1/node-b", hubble.Peer{Address: "192.0.2.12:4244"}) // unchanged: nothing sent
	p.Delete("c1/node-a")
	for _, want := range []string{"PEER_UPDATED c1/node-b 192.0.2.12:4244", "PEER_DELETED c1/node-a 192.0.2.10:4244 node-a.c1.hubble-grpc.cilium.io"} {
		if got := next(); got != want {
			t.Errorf("change: %q, want %q", got, want)
		}
	}
}

func TestNamespacesAndNodes(t *testing.T) {
	r := hubble.NewRing(7)
	for _, eps := range [][2]string{{"c1/shop", "c1/db"}, {"c2/shop", "c1/shop"}, {"/", "c1/db"}} {
		ep := func(s string) *flow.Endpoint {
			c, ns, _ := strings.Cut(s, "/")
			return &flow.Endpoint{ClusterName: c, Namespace: ns}
		}
		r.Write(hubble.Entry{Flow: &flow.Flow{Source: ep(eps[0]), Destination: ep(eps[1])}})
	}
	c := serve(t, r)
	ns, err := c.GetNamespaces(context.Background(), &observer.GetNamespacesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range ns.GetNamespaces() {
		got = append(got, n.GetCluster()+"/"+n.GetNamespace())
	}
	if strings.Join(got, " ") != "c1/db c1/shop c2/shop" {
		t.Errorf("namespaces %v, want c1/db c1/shop c2/shop", got)
	}
	nodes, err := c.GetNodes(context.Background(), &observer.GetNodesRequest{})
	if err != nil || len(nodes.GetNodes()) != 1 || nodes.GetNodes()[0].GetName() != "n" || nodes.GetNodes()[0].GetSeenFlows() != 3 {
		t.Errorf("nodes %v (%v), want this node with 3 flows", nodes, err)
	}
}

func TestParseDropIPv6ICMP(t *testing.T) {
	src, dst := netip.MustParseAddr("fd00::2"), netip.MustParseAddr("fd00::7")
	f, err := parser.Decode(monitor.Event{Event: eventsmap.Event{
		Type: eventsmap.TypeDrop, Reason: eventsmap.ReasonPolicyDenied, Direction: policy.Egress, EndpointID: 7,
		SrcIdentity: 1000, DstIdentity: 2, Proto: policy.ProtoICMPv6, ICMPType: 128,
		Src: netip.AddrPortFrom(src, 0), Dst: netip.AddrPortFrom(dst, 0),
	}, Time: time.Unix(100, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if f.GetVerdict() != flow.Verdict_DROPPED || f.GetDropReasonDesc() != flow.DropReason_POLICY_DENY || f.GetDropReason() != 181 ||
		f.GetIsReply() != nil || f.GetTrafficDirection() != flow.TrafficDirection_EGRESS || f.GetIP().GetIpVersion() != flow.IPVersion_IPv6 ||
		f.GetL4().GetICMPv6().GetType() != 128 || f.GetSummary() != "ICMPv6 EchoRequest" || f.GetEventType().GetSubType() != 181 {
		t.Errorf("IPv6 drop %v", f)
	}
	if _, err := parser.Decode(monitor.Event{Event: eventsmap.Event{Type: 9}}); err == nil {
		t.Error("an unknown event type decoded")
	}
}
