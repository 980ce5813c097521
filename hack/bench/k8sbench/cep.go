package k8sbench

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"runtime/pprof"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	k8sclient "github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/k8s/k8stest"
	"github.com/apiary-net/apiary/hack/bench"
)

// CEPSize is the CiliumEndpoint case of issue 23: Endpoints
// CiliumEndpoints spread over Nodes nodes and Namespaces namespaces,
// read by Watchers simulated nodes, each with its own client and
// informer as each node's agent has.
type CEPSize struct {
	Nodes, Endpoints, Namespaces, Watchers int
}

// CEPFull is the size: 100 nodes, 10,000 endpoints, every node
// watching.
var CEPFull = CEPSize{Nodes: 100, Endpoints: 10000, Namespaces: 10, Watchers: 100}

// Validate checks that the size makes a cluster.
func (s CEPSize) Validate() error {
	switch {
	case s.Nodes < 1 || s.Nodes > 65536:
		return fmt.Errorf("nodes: %d is not 1..65536", s.Nodes)
	case s.Endpoints < 1 || s.Endpoints > 1<<20:
		return fmt.Errorf("endpoints: %d is not 1..1048576", s.Endpoints)
	case s.Namespaces < 1:
		return fmt.Errorf("namespaces: %d is not positive", s.Namespaces)
	case s.Watchers < 1:
		return fmt.Errorf("watchers: %d is not positive", s.Watchers)
	}
	return nil
}

// nodeIP is the IP of node n.
func (s CEPSize) nodeIP(n int) netip.Addr {
	return netip.AddrFrom4([4]byte{10, 200, byte(n >> 8), byte(n)})
}

// watcherIP is the node IP of watcher w: node w's while there are nodes.
func (s CEPSize) watcherIP(w int) netip.Addr {
	if w < s.Nodes {
		return s.nodeIP(w)
	}
	return netip.AddrFrom4([4]byte{10, 201, byte(w >> 8), byte(w)})
}

// expected is how many endpoints watcher w sees: all but its node's own.
func (s CEPSize) expected(w int) int {
	if w >= s.Nodes {
		return s.Endpoints
	}
	own := s.Endpoints / s.Nodes
	if w < s.Endpoints%s.Nodes {
		own++
	}
	return s.Endpoints - own
}

// CEPResults are one run of the CiliumEndpoint case.
type CEPResults struct {
	Size         CEPSize
	Runs         int
	Fill         time.Duration
	Apiary, Peer Side
}

// MeasureCEP starts a kube-apiserver, fills it with s's CiliumEndpoints,
// and runs timed rounds of each side, alternating which goes first: the
// apiary side is, per watcher, the Kubernetes cell's CiliumEndpoint
// resource feeding policy/ipcache/k8scep's watcher into a real ipcache,
// timed until every watcher's ipcache holds every other node's endpoint;
// the peer is, per watcher, a client-go dynamic informer, timed until
// every one has synced.
func MeasureCEP(tb testing.TB, s CEPSize, runs int) (CEPResults, error) {
	r := CEPResults{Size: s, Runs: runs}
	if err := s.Validate(); err != nil {
		return r, err
	}
	if runs < 1 {
		return r, fmt.Errorf("runs %d: want >= 1", runs)
	}
	srv := k8stest.Start(tb)
	srv.InstallCRDs()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	begin := time.Now()
	if err := fillCEPs(ctx, srv, s); err != nil {
		return r, fmt.Errorf("fill: %w", err)
	}
	r.Fill = time.Since(begin)
	kubeconfig := srv.WriteKubeconfig(k8stest.AdminToken)
	sides := []func() error{
		func() error {
			cpu0 := bench.ProcessCPU()
			var err error
			pprof.Do(ctx, pprof.Labels("side", "apiary"), func(ctx context.Context) {
				var d time.Duration
				var heap int64
				d, heap, err = cepRound(ctx, kubeconfig, s, startApiaryWatchers)
				r.Apiary.Took, r.Apiary.Heap = append(r.Apiary.Took, d), append(r.Apiary.Heap, heap)
			})
			r.Apiary.CPU = append(r.Apiary.CPU, bench.ProcessCPU()-cpu0)
			return err
		},
		func() error {
			cpu0 := bench.ProcessCPU()
			var err error
			pprof.Do(ctx, pprof.Labels("side", "client-go"), func(ctx context.Context) {
				var d time.Duration
				var heap int64
				d, heap, err = cepRound(ctx, kubeconfig, s, startPeerWatchers)
				r.Peer.Took, r.Peer.Heap = append(r.Peer.Took, d), append(r.Peer.Heap, heap)
			})
			r.Peer.CPU = append(r.Peer.CPU, bench.ProcessCPU()-cpu0)
			return err
		},
	}
	for i := range runs {
		order := slices.Clone(sides)
		if i%2 == 1 {
			slices.Reverse(order)
		}
		for _, side := range order {
			if err := side(); err != nil {
				return r, fmt.Errorf("round %d: %w", i+1, err)
			}
			settleHeap()
		}
	}
	return r, nil
}

// cepWatchers are the running watchers of one side.
type cepWatchers interface {
	// seen returns how many endpoints watcher w holds.
	seen(w int) int
	stop() error
}

// cepRound starts a side's watchers, times them until each has seen
// every endpoint it should, measures the heap and stops them.
func cepRound(ctx context.Context, kubeconfig string, s CEPSize,
	start func(ctx context.Context, kubeconfig string, s CEPSize) (cepWatchers, error)) (time.Duration, int64, error) {
	base := liveHeap()
	begin := time.Now()
	ws, err := start(ctx, kubeconfig, s)
	if err != nil {
		return 0, 0, err
	}
	err = waitAllSeen(ctx, ws, s)
	took := time.Since(begin)
	heap := liveHeap() - base
	return took, heap, errors.Join(err, ws.stop())
}

func waitAllSeen(ctx context.Context, ws cepWatchers, s CEPSize) error {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	next := 0
	for {
		for next < s.Watchers && ws.seen(next) >= s.expected(next) {
			next++
		}
		if next == s.Watchers {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("watcher %d holds %d of %d endpoints: %w", next, ws.seen(next), s.expected(next), ctx.Err())
		case <-tick.C:
		}
	}
}

// fillCEPs creates the namespaces and the CiliumEndpoints, with 16
// requests in flight.
func fillCEPs(ctx context.Context, srv *k8stest.Server, s CEPSize) error {
	cs := srv.Clientset()
	for n := range s.Namespaces {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cep-%d", n)}}
		if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	ri := srv.Dynamic().Resource(k8sclient.CiliumEndpointResource)
	work := make(chan int)
	errs := make(chan error, 16)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := range work {
				obj := cepObject(s, i)
				if _, err := ri.Namespace(obj.GetNamespace()).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for i := range s.Endpoints {
		work <- i
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

// cepObject is endpoint i as its node's agent publishes it.
func cepObject(s CEPSize, i int) *unstructured.Unstructured {
	ip := netip.AddrFrom4([4]byte{10, byte(1 + i>>16), byte(i >> 8), byte(i)})
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cilium.io/v2", "kind": "CiliumEndpoint",
		"metadata": map[string]any{"name": fmt.Sprintf("pod-%d", i), "namespace": fmt.Sprintf("cep-%d", i%s.Namespaces)},
		"status": map[string]any{
			"id":          int64(i%4000 + 1),
			"identity":    map[string]any{"id": int64(256 + i%500), "labels": []any{fmt.Sprintf("k8s:app=app-%d", i%500)}},
			"networking":  map[string]any{"node": s.nodeIP(i % s.Nodes).String(), "addressing": []any{map[string]any{"ipv4": ip.String()}}},
			"state":       "ready",
			"named-ports": []any{map[string]any{"name": "http", "port": int64(8080), "protocol": "TCP"}},
		},
	}}
}
