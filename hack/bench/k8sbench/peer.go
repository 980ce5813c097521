package k8sbench

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	k8sclient "github.com/apiary-net/apiary/cells/k8s"
)

// peer is bare client-go: shared informer factories over the same objects
// the agent's cache-sync gate waits for (this node's pods by the same
// field selector, namespaces, NetworkPolicies, CNPs, CCNPs) plus the
// nodes the agent also watches, with the agent's rate limits and its
// transform (managed fields dropped), so both hold the same objects.
type peer struct {
	stop    chan struct{}
	pods    informers.SharedInformerFactory
	others  informers.SharedInformerFactory
	dynamic dynamicinformer.DynamicSharedInformerFactory
	synced  []cache.SharedIndexInformer
	byName  map[string]cache.SharedIndexInformer
}

// startPeer builds the clients from the kubeconfig, starts the
// informers and waits until every one has synced.
func startPeer(ctx context.Context, kubeconfig string) (*peer, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("read the kubeconfig: %w", err)
	}
	def := k8sclient.DefaultConfig
	cfg.QPS, cfg.Burst = float32(def.K8sClientQPS), def.K8sClientBurst
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("create the HTTP client: %w", err)
	}
	cs, err := kubernetes.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("create the clientset: %w", err)
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("create the dynamic client: %w", err)
	}
	p := &peer{stop: make(chan struct{})}
	p.pods = informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTransform(dropManagedFields),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = "spec.nodeName=" + LocalNode }))
	p.others = informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTransform(dropManagedFields))
	p.dynamic = dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	p.byName = map[string]cache.SharedIndexInformer{
		"pods":            p.pods.Core().V1().Pods().Informer(),
		"namespaces":      p.others.Core().V1().Namespaces().Informer(),
		"NetworkPolicies": p.others.Networking().V1().NetworkPolicies().Informer(),
		"CNPs":            p.dynamic.ForResource(k8sclient.CNPResource).Informer(),
		"CCNPs":           p.dynamic.ForResource(k8sclient.CCNPResource).Informer(),
	}
	for _, name := range []string{"CNPs", "CCNPs"} {
		if err := p.byName[name].SetTransform(dropManagedFields); err != nil {
			return nil, fmt.Errorf("set the transform of %s: %w", name, err)
		}
	}
	p.others.Core().V1().Nodes().Informer() // started, not waited for, as in the agent
	p.pods.Start(p.stop)
	p.others.Start(p.stop)
	p.dynamic.Start(p.stop)
	// cache.WaitForCacheSync polls every 100ms; poll every millisecond
	// instead, so that the peer's time is not rounded up.
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for name, inf := range p.byName {
		for !inf.HasSynced() {
			select {
			case <-tick.C:
			case <-ctx.Done():
				p.shutdown()
				return nil, fmt.Errorf("wait for the %s informer: %w", name, ctx.Err())
			}
		}
	}
	return p, nil
}

func dropManagedFields(obj any) (any, error) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	return obj, nil
}

// check verifies that the informers hold every object.
func (p *peer) check(s Size) error {
	nps, cnps, ccnps := s.Kinds()
	for name, want := range map[string]int{"pods": s.LocalPods, "namespaces": s.Namespaces, "NetworkPolicies": nps, "CNPs": cnps, "CCNPs": ccnps} {
		n := len(p.byName[name].GetStore().ListKeys())
		if n < want || (name != "namespaces" && n != want) {
			return fmt.Errorf("client-go holds %d %s, want %d", n, name, want)
		}
	}
	return nil
}

func (p *peer) shutdown() {
	close(p.stop)
	p.pods.Shutdown()
	p.others.Shutdown()
	p.dynamic.Shutdown()
}
