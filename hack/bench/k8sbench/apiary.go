package k8sbench

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/hive"
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/statedir"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/cells/stdhive"
	"github.com/apiary-net/apiary/datapath/datapathtest"
	"github.com/apiary-net/apiary/datapath/endpoint/endpointcell"
	"github.com/apiary-net/apiary/datapath/endpoint/k8spods"
	"github.com/apiary-net/apiary/datapath/node/k8snodes"
	"github.com/apiary-net/apiary/datapath/node/nodecell"
	"github.com/apiary-net/apiary/kvstore/kvstorecell"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/identity/identitycell"
	"github.com/apiary-net/apiary/policy/ipcache/ipcachecell"
	"github.com/apiary-net/apiary/policy/k8spolicy"
	"github.com/apiary-net/apiary/policy/policycell"
)

// apiaryAgent is the part of the agent the Kubernetes cells need, composed
// from the cells as cmd/apiary-agent/agent composes them: the Kubernetes
// client and resources, the policy (NP/CNP/CCNP), pod, namespace and
// node watchers, and what they feed (policy repository, identities,
// ipcache, node manager, endpoint manager on the fake datapath), without
// etcd (kvstore disabled) and without BPF.
type apiaryAgent struct {
	hive  *hive.Hive
	gate  k8s.CacheSync
	pods  k8s.Pods
	ns    k8s.Namespaces
	nps   k8s.NetworkPolicies
	cnps  k8s.CiliumNetworkPolicies
	ccnps k8s.CiliumClusterwideNetworkPolicies

	synced map[string]time.Duration
}

// newApiaryAgent builds (does not populate) the hive; dir is a fresh
// directory for its state and API socket.
func newApiaryAgent(kubeconfig, dir string) (*apiaryAgent, error) {
	a := &apiaryAgent{}
	h := stdhive.New(hive.Options{Logger: slog.New(slog.DiscardHandler)},
		api.Cell, status.Cell, localnode.Cell, statedir.Cell,
		k8s.Cell, kvstorecell.Cell, store.Cell, identitycell.Cell, policycell.Cell, k8spolicy.Cell,
		ipcachecell.Cell, nodecell.Cell, k8snodes.Cell,
		endpointcell.Cell, k8spods.Cell, datapathtest.CellOf(datapathtest.New()),
		cell.Invoke(func(g k8s.CacheSync, p k8s.Pods, ns k8s.Namespaces, np k8s.NetworkPolicies,
			cnp k8s.CiliumNetworkPolicies, ccnp k8s.CiliumClusterwideNetworkPolicies) {
			a.gate, a.pods, a.ns, a.nps, a.cnps, a.ccnps = g, p, ns, np, cnp, ccnp
		}))
	err := h.Flags().Parse([]string{
		"--socket-path=" + filepath.Join(dir, "apiary.sock"), "--state-dir=" + filepath.Join(dir, "state"),
		"--cluster-name=c1", "--cluster-id=1", "--node-name=" + LocalNode, "--node-ip=192.168.0.1", "--pod-cidr=10.1.0.0/24",
		"--k8s-kubeconfig-path=" + kubeconfig,
	})
	if err != nil {
		return nil, fmt.Errorf("set the agent's flags: %w", err)
	}
	a.hive = h
	return a, nil
}

// start populates and starts the hive and waits for the CacheSync gate;
// it records in a.synced when (since begin) each cache left the gate's
// pending list, polled every millisecond.
func (a *apiaryAgent) start(ctx context.Context, begin time.Time) error {
	if err := a.hive.Populate(); err != nil {
		return fmt.Errorf("populate agent: %w", err)
	}
	if err := a.hive.Start(ctx); err != nil {
		return fmt.Errorf("start agent: %w", err)
	}
	a.watchGate(ctx, begin)
	if err := a.gate.WaitForCacheSync(ctx); err != nil {
		return fmt.Errorf("wait for the cache-sync gate: %w", err)
	}
	if pending, _ := a.gate.Pending(); len(pending) > 0 {
		return fmt.Errorf("the cache-sync gate opened by its timeout with %v pending", pending)
	}
	return nil
}

// check verifies, after the sync, that the caches hold every object.
func (a *apiaryAgent) check(ctx context.Context, s Size) error {
	nps, cnps, ccnps := s.Kinds()
	counts := []struct {
		name string
		len  func() (int, error)
		want int
	}{
		{"pods", func() (int, error) { return storeLen(ctx, a.pods) }, s.LocalPods},
		{"namespaces", func() (int, error) { return storeLen(ctx, a.ns) }, s.Namespaces},
		{"NetworkPolicies", func() (int, error) { return storeLen(ctx, a.nps) }, nps},
		{"CNPs", func() (int, error) { return storeLen[*unstructured.Unstructured](ctx, a.cnps) }, cnps},
		{"CCNPs", func() (int, error) { return storeLen[*unstructured.Unstructured](ctx, a.ccnps) }, ccnps},
	}
	for _, c := range counts {
		n, err := c.len()
		if err != nil {
			return fmt.Errorf("apiary %s: %w", c.name, err)
		}
		// Namespaces: the server's own (default, kube-system, ...) too.
		if n < c.want || (c.name != "namespaces" && n != c.want) {
			return fmt.Errorf("apiary holds %d %s, want %d", n, c.name, c.want)
		}
	}
	return nil
}

func storeLen[T runtime.Object](ctx context.Context, r k8s.Resource[T]) (int, error) {
	st, err := r.Store(ctx)
	if err != nil {
		return 0, err
	}
	return len(st.List()), nil
}

func (a *apiaryAgent) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := a.hive.Stop(ctx); err != nil {
		return fmt.Errorf("stop agent: %w", err)
	}
	return nil
}

// watchGate polls the gate until it opens and records when each pending
// cache synced.
func (a *apiaryAgent) watchGate(ctx context.Context, begin time.Time) {
	a.synced = map[string]time.Duration{}
	first, _ := a.gate.Pending()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		pending, open := a.gate.Pending()
		for _, name := range first {
			if _, done := a.synced[name]; !done && !slices.Contains(pending, name) {
				a.synced[name] = time.Since(begin)
			}
		}
		if open {
			return
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}
