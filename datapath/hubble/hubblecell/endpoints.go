package hubblecell

import (
	"context"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/datapath/endpoint"
	"github.com/apiary-net/apiary/datapath/hubble"
	"github.com/apiary-net/apiary/policy/ipcache"
)

// indexMaxAge is how long the index of local endpoints is reused before
// it is rebuilt from the endpoint manager (for the pods' workloads); a
// change of an endpoint has it rebuilt at the next lookup.
const indexMaxAge = time.Second

// endpointIndex implements hubble.Endpoints: local endpoints from the
// endpoint manager (indexed by address, rebuilt after an endpoint changed
// and at least every second, with the workloads of their pods from the Kubernetes pod cache),
// other addresses from the ipcache (which carries the pod names other
// agents publish).
type endpointIndex struct {
	eps  *endpoint.Manager
	ipc  ipcache.IPCache
	pods k8s.Pods // nil without Kubernetes: no workloads

	stale atomic.Bool // an endpoint changed since the index was built
	mu    sync.Mutex
	built time.Time
	byIP  map[netip.Addr]hubble.EndpointInfo
}

var _ hubble.Endpoints = (*endpointIndex)(nil)

func newEndpointIndex(eps *endpoint.Manager, ipc ipcache.IPCache, pods k8s.Pods) *endpointIndex {
	x := &endpointIndex{eps: eps, ipc: ipc, pods: pods}
	if eps != nil {
		// A flow of an endpoint created a moment ago names it by its id
		// and pod, not only by what the ipcache knows.
		eps.OnChange(func() { x.stale.Store(true) })
	}
	return x
}

// podStore returns the pod cache if it has synced (never waits: the
// index is rebuilt on the flow path).
func (x *endpointIndex) podStore() k8s.Store[*corev1.Pod] {
	if x.pods == nil {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	st, err := x.pods.Store(ctx)
	if err != nil {
		return nil
	}
	return st
}

// LookupIP returns what is known of ip.
func (x *endpointIndex) LookupIP(ip netip.Addr) (hubble.EndpointInfo, bool) {
	if info, ok := x.local(ip); ok {
		return info, true
	}
	if x.ipc == nil {
		return hubble.EndpointInfo{}, false
	}
	e, ok := x.ipc.LookupByIP(ip)
	if !ok || (e.K8sPodName == "" && e.K8sNamespace == "") {
		return hubble.EndpointInfo{}, false
	}
	return hubble.EndpointInfo{Namespace: e.K8sNamespace, PodName: e.K8sPodName}, true
}

func (x *endpointIndex) local(ip netip.Addr) (hubble.EndpointInfo, bool) {
	if x.eps == nil {
		return hubble.EndpointInfo{}, false
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.stale.Swap(false) || time.Since(x.built) > indexMaxAge {
		x.byIP = make(map[netip.Addr]hubble.EndpointInfo, len(x.byIP))
		pods := x.podStore()
		for _, e := range x.eps.Endpoints() {
			info := hubble.EndpointInfo{EndpointID: uint32(e.ID), Namespace: e.Pod.Namespace, PodName: e.Pod.Name}
			if pods != nil && !e.Pod.IsZero() {
				if pod, ok := pods.Get(k8s.Key{Namespace: e.Pod.Namespace, Name: e.Pod.Name}); ok {
					info.Workloads = podWorkloads(pod)
				}
			}
			for _, a := range []netip.Addr{e.IPv4, e.IPv6} {
				if a.IsValid() {
					x.byIP[a] = info
				}
			}
		}
		x.built = time.Now()
	}
	info, ok := x.byIP[ip]
	return info, ok
}
