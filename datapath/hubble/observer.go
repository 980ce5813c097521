package hubble

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/apiary-net/apiary/datapath/hubble/api/flow"
	"github.com/apiary-net/apiary/datapath/hubble/api/observer"
	"github.com/apiary-net/apiary/datapath/hubble/api/relay"
)

// Observer is Hubble's observer.Observer service over a Ring.
type Observer struct {
	observer.UnimplementedObserverServer

	Ring *Ring
	// NodeName names this node in responses; Address is where a relay
	// reaches it (--hubble-listen-address with the node IP), if anywhere.
	NodeName, Address string
	// Version is the agent's version, Started when the observer started.
	Version string
	Started time.Time
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

var _ observer.ObserverServer = (*Observer)(nil)

func (o *Observer) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// ServerStatus reports the ring's counts, the uptime and the flow rate
// of the last minute.
func (o *Observer) ServerStatus(context.Context, *observer.ServerStatusRequest) (*observer.ServerStatusResponse, error) {
	held, seen := o.Ring.Counts()
	return &observer.ServerStatusResponse{
		NumFlows: held, MaxFlows: uint64(o.Ring.Capacity()), SeenFlows: seen,
		UptimeNs: uint64(o.now().Sub(o.Started)), Version: o.Version, FlowsRate: o.flowsRate(),
	}, nil
}

// flowsRate is the number of flows per second written in the last minute.
func (o *Observer) flowsRate() float64 {
	cutoff := o.now().Add(-time.Minute)
	oldest, next := o.Ring.Bounds()
	n := 0
	for seq := next; seq > oldest; seq-- {
		e, ok := o.Ring.At(seq - 1)
		if !ok || e.Flow == nil {
			continue
		}
		if e.Flow.GetTime().AsTime().Before(cutoff) {
			break
		}
		n++
	}
	return float64(n) / time.Minute.Seconds()
}

// GetNodes lists this node (a relay lists every node it knows).
func (o *Observer) GetNodes(context.Context, *observer.GetNodesRequest) (*observer.GetNodesResponse, error) {
	held, seen := o.Ring.Counts()
	return &observer.GetNodesResponse{Nodes: []*observer.Node{{
		Name: o.NodeName, Version: o.Version, Address: o.Address, State: relay.NodeState_NODE_CONNECTED,
		UptimeNs: uint64(o.now().Sub(o.Started)), NumFlows: held, MaxFlows: uint64(o.Ring.Capacity()), SeenFlows: seen,
	}}}, nil
}

// GetNamespaces lists the namespaces of the flows in the ring.
func (o *Observer) GetNamespaces(context.Context, *observer.GetNamespacesRequest) (*observer.GetNamespacesResponse, error) {
	type key struct{ cluster, ns string }
	seen := map[key]bool{}
	var out []*observer.Namespace
	oldest, next := o.Ring.Bounds()
	for seq := oldest; seq < next; seq++ {
		e, ok := o.Ring.At(seq)
		if !ok || e.Flow == nil {
			continue
		}
		for _, ep := range []*flow.Endpoint{e.Flow.GetSource(), e.Flow.GetDestination()} {
			k := key{ep.GetClusterName(), ep.GetNamespace()}
			if k.ns != "" && !seen[k] {
				seen[k] = true
				out = append(out, &observer.Namespace{Cluster: k.cluster, Namespace: k.ns})
			}
		}
	}
	slices.SortFunc(out, func(a, b *observer.Namespace) int {
		return cmp.Or(cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(a.Namespace, b.Namespace))
	})
	return &observer.GetNamespacesResponse{Namespaces: out}, nil
}

// GetFlows sends the flows of the ring that pass the request's filters
// and time bounds: the last Number (the first Number with First), all
// when Number is 0, and with Follow every new one until the client goes.
func (o *Observer) GetFlows(req *observer.GetFlowsRequest, stream observer.Observer_GetFlowsServer) error {
	q, err := newQuery(req)
	if err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	mask, err := newFieldMask(req.GetFieldMask())
	if err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	ctx := stream.Context()
	seq, end := o.start(q)
	sent := uint64(0)
	for {
		if !q.follow && seq >= end {
			return nil
		}
		e, after, ok, err := o.Ring.Next(ctx, seq, q.follow)
		switch {
		case errors.Is(err, ErrRingStopped) || errors.Is(err, context.Canceled):
			return nil
		case err != nil:
			return err
		case !ok:
			return nil
		}
		seq = after
		if e.Flow == nil {
			if err := stream.Send(o.lostResponse(e)); err != nil {
				return err
			}
			continue
		}
		if q.until != nil && e.Flow.GetTime().AsTime().After(*q.until) {
			return nil
		}
		if !q.wants(e.Flow) {
			continue
		}
		if err := stream.Send(&observer.GetFlowsResponse{
			ResponseTypes: &observer.GetFlowsResponse_Flow{Flow: mask.apply(e.Flow)},
			NodeName:      o.NodeName, Time: e.Flow.GetTime(),
		}); err != nil {
			return err
		}
		sent++
		if q.first && q.number > 0 && sent == q.number {
			return nil
		}
	}
}

func (o *Observer) lostResponse(e Entry) *observer.GetFlowsResponse {
	return &observer.GetFlowsResponse{
		ResponseTypes: &observer.GetFlowsResponse_LostEvents{LostEvents: &flow.LostEvent{Source: e.LostSource, NumEventsLost: e.Lost}},
		NodeName:      o.NodeName, Time: timestamppb.New(o.now()),
	}
}

// start returns where the stream begins and, without follow, where it
// ends (the ring's end when the request came).
func (o *Observer) start(q *query) (seq, end uint64) {
	oldest, next := o.Ring.Bounds()
	switch {
	case q.first:
		return oldest, next
	case q.number > 0: // the last Number matching flows
		found := uint64(0)
		for s := next; s > oldest; s-- {
			e, ok := o.Ring.At(s - 1)
			if !ok {
				break
			}
			if e.Flow != nil && q.wants(e.Flow) && (q.until == nil || !e.Flow.GetTime().AsTime().After(*q.until)) {
				found++
				if found == q.number {
					return s - 1, next
				}
			}
		}
		return oldest, next
	case q.follow && q.since == nil:
		return next, next
	}
	return oldest, next
}
