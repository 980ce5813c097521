package bpfsim

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"time"

	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/loader"
	"github.com/apiary-net/apiary/datapath/loader/testpkt"
	"github.com/apiary-net/apiary/datapath/maps/eventsmap"
	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/policyapi"
	"github.com/apiary-net/apiary/policy/simulate"
)

// tc return codes of the programs.
const (
	tcActOK   = 0
	tcActShot = 2
)

// sourcePort is the source port of every query's packet (an ephemeral
// port; conntrack is empty for each query, so reusing it is harmless).
const sourcePort = 49152

var packetProtos = map[policyapi.Protocol]uint8{
	policyapi.ProtoTCP: testpkt.ProtoTCP, policyapi.ProtoUDP: testpkt.ProtoUDP, policyapi.ProtoSCTP: testpkt.ProtoSCTP,
	policyapi.ProtoICMP: testpkt.ProtoICMP, policyapi.ProtoICMPv6: testpkt.ProtoICMPv6,
}

// queryPacket returns q's packet between src and dst: a TCP SYN, UDP or
// SCTP packet from sourcePort to the query's port, or an ICMP/ICMPv6
// message of the query's type (code 0, echo identifier sourcePort).
func queryPacket(q simulate.QueryModel, src, dst netip.Addr) testpkt.Packet {
	pkt := testpkt.Packet{Src: src, Dst: dst, Proto: packetProtos[q.Protocol]}
	if _, ok := q.Protocol.ICMPFamily(); ok {
		pkt.ICMPType, pkt.ICMPID = uint8(q.Port), sourcePort
		return pkt
	}
	pkt.Sport, pkt.Dport = sourcePort, q.Port
	return pkt
}

// ReasonNotEnforced is the reason of a direction the program allowed
// without a policy lookup: no rule isolates the endpoint there and its
// map state has no deny key (datapath.PolicyEnforced).
const ReasonNotEnforced = "no policy (allow): enforcement off, no lookup"

// endpoint is a local endpoint whose programs are loaded.
type endpoint struct {
	id      uint16
	progs   *loader.Programs
	enforce [2]bool // by policy.Direction
}

// Run answers every query of the model, in order, with results as
// policy/simulate's Run (RunExplain when explain) gives them. It stops
// with ctx's error when ctx ends between two queries.
func (d *Datapath) Run(ctx context.Context, explain bool) ([]simulate.Result, error) {
	out := make([]simulate.Result, 0, len(d.model.Queries))
	for i, q := range d.model.Queries {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("run queries: %w", err)
		}
		r, err := d.query(q, explain)
		if err != nil {
			return nil, fmt.Errorf("run queries[%d] (%s -> %s): %w", i, q.Query.From, q.Query.To, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// query runs q's packet through the source's egress program and the
// destination's ingress program. The ingress program runs even when the
// egress one dropped the packet, so that each direction has its verdict.
func (d *Datapath) query(q simulate.QueryModel, explain bool) (simulate.Result, error) {
	if q.Self {
		self := simulate.Decision{Verdict: simulate.Allowed, Reason: simulate.ReasonSelf}
		return simulate.NewResult(q, self, self, explain), nil
	}
	if err := d.ct.Flush(); err != nil {
		return simulate.Result{}, fmt.Errorf("flush conntrack: %w", err)
	}
	v6 := family(q)
	src, err := d.addrs.address(q.From, v6)
	if err != nil {
		return simulate.Result{}, err
	}
	dst, err := d.addrs.address(q.To, v6)
	if err != nil {
		return simulate.Result{}, err
	}
	pkt := queryPacket(q, src, dst)
	egress, err := d.direction(q.From, q.To, policy.Egress, pkt)
	if err != nil {
		return simulate.Result{}, err
	}
	ingress, err := d.direction(q.To, q.From, policy.Ingress, pkt)
	if err != nil {
		return simulate.Result{}, err
	}
	return simulate.NewResult(q, egress, ingress, explain), nil
}

// direction runs pkt through subject's program of dir, when subject is a
// local endpoint; peer is the other side.
func (d *Datapath) direction(subject, peer simulate.SideModel, dir policy.Direction, pkt testpkt.Packet) (simulate.Decision, error) {
	switch {
	case subject.Endpoint == nil:
		return simulate.Decision{Verdict: simulate.Allowed, Reason: simulate.ReasonNotEndpoint}, nil
	case !subject.Endpoint.Local:
		return simulate.Decision{Verdict: simulate.Allowed, Reason: simulate.ReasonOtherCluster}, nil
	}
	ep, err := d.endpoint(subject.Endpoint)
	if err != nil {
		return simulate.Decision{}, err
	}
	prog, name := ep.progs.FromContainer, "from_container"
	if dir == policy.Ingress {
		prog, name = ep.progs.ToContainer, "to_container"
	}
	frame, err := pkt.Frame()
	if err != nil {
		return simulate.Decision{}, err
	}
	ret, err := prog.Run(&ebpf.RunOptions{Data: frame})
	if err != nil {
		return simulate.Decision{}, fmt.Errorf("run %s of %s (BPF_PROG_TEST_RUN): %w", name, subject.Endpoint.Ref, err)
	}
	evs, err := d.drainEvents()
	if err != nil {
		return simulate.Decision{}, err
	}
	if err := checkIdentities(evs, dir, subject.Identity, peer.Identity); err != nil {
		return simulate.Decision{}, fmt.Errorf("%s of %s: %w", name, subject.Endpoint.Ref, err)
	}
	isND := pkt.Proto == testpkt.ProtoICMPv6 && policy.IsNeighbourDiscovery(policyapi.ProtoICMPv6, uint16(pkt.ICMPType))
	if isND && ret == tcActOK && len(evs) == 0 { // passed before any policy lookup
		return simulate.Decision{Verdict: simulate.Allowed, Reason: "allowed by " + name + ": neighbour discovery, no policy lookup"}, nil
	}
	return decision(name, ret, evs)
}

// checkIdentities checks that the programs saw the identities the engine
// decided with: the endpoint's own, and the peer's from the ipcache map.
func checkIdentities(evs []eventsmap.Event, dir policy.Direction, self, peer identity.NumericIdentity) error {
	for _, ev := range evs {
		gotSelf, gotPeer := ev.SrcIdentity, ev.DstIdentity
		if dir == policy.Ingress {
			gotSelf, gotPeer = gotPeer, gotSelf
		}
		if gotSelf != self || gotPeer != peer {
			return fmt.Errorf("%s event has endpoint identity %d and peer identity %d, the engine decided with %d and %d",
				ev.Type, gotSelf, gotPeer, self, peer)
		}
	}
	return nil
}

// decision turns a program's return code and the events it wrote into a
// direction's verdict and reason.
func decision(prog string, ret uint32, evs []eventsmap.Event) (simulate.Decision, error) {
	var verdict, drop *eventsmap.Event
	for i := range evs {
		switch evs[i].Type {
		case eventsmap.TypePolicyVerdict:
			verdict = &evs[i]
		case eventsmap.TypeDrop:
			drop = &evs[i]
		}
	}
	switch ret {
	case tcActOK:
		if verdict == nil {
			return simulate.Decision{Verdict: simulate.Allowed, Reason: ReasonNotEnforced}, nil
		}
		return simulate.Decision{Verdict: simulate.Allowed,
			Reason: fmt.Sprintf("allowed by %s: policy map, %s match", prog, verdict.MatchType)}, nil
	case tcActShot:
		reason := "no drop event"
		if drop != nil {
			reason = fmt.Sprintf("%s (%d)", drop.Reason, uint8(drop.Reason))
		}
		return simulate.Decision{Verdict: simulate.Denied, Reason: fmt.Sprintf("dropped by %s: %s", prog, reason)}, nil
	}
	return simulate.Decision{}, fmt.Errorf("%s returned %d, neither TC_ACT_OK nor TC_ACT_SHOT", prog, ret)
}

// drainEvents returns the events the programs wrote since the last call.
func (d *Datapath) drainEvents() ([]eventsmap.Event, error) {
	var out []eventsmap.Event
	for {
		d.events.SetDeadline(time.Now()) // the records are there already: poll
		ev, err := d.events.Read()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
}

// endpoint returns em's loaded programs, loading them the first time:
// its policy map written from its map state, enforcement per direction as
// datapath.PolicyEnforced says.
func (d *Datapath) endpoint(em *simulate.EndpointModel) (*endpoint, error) {
	if ep := d.endpoints[em]; ep != nil {
		return ep, nil
	}
	if d.nextID == ^uint16(0) {
		return nil, fmt.Errorf("load endpoint %s: more than %d local endpoints in queries (endpoint ids are 16 bits)", em.Ref, ^uint16(0))
	}
	d.nextID++
	ep := &endpoint{id: d.nextID}
	for _, dir := range []policy.Direction{policy.Ingress, policy.Egress} {
		ep.enforce[dir] = datapath.PolicyEnforced(em.MapState, dir, em.DefaultDeny[dir])
	}
	if _, _, err := d.loader.SyncPolicyMap(ep.id, em.MapState); err != nil {
		return nil, fmt.Errorf("write policy map of %s: %w", em.Ref, err)
	}
	progs, err := d.loader.Load(datapath.EndpointSpec{
		ID: datapath.EndpointID(ep.id), Identity: em.Identity,
		IngressEnforcement: ep.enforce[policy.Ingress], EgressEnforcement: ep.enforce[policy.Egress],
	})
	if err != nil {
		return nil, fmt.Errorf("load programs of %s: %w", em.Ref, err)
	}
	ep.progs = progs
	d.endpoints[em] = ep
	return ep, nil
}
