package k8sbench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/hive"
	"github.com/apiary-net/apiary/cells/job"
	k8sclient "github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/stdhive"
	"github.com/apiary-net/apiary/policy/identity/identitycache"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/ipcache/k8scep"
)

// apiaryWatchers are one hive per simulated node: the local node, the
// Kubernetes cell (its CiliumEndpoints resource) and the k8scep watcher
// into that node's ipcache.
type apiaryWatchers struct {
	hives []*hive.Hive
	ipcs  []*ipcache.Cache
}

func startApiaryWatchers(ctx context.Context, kubeconfig string, s CEPSize) (cepWatchers, error) {
	// Each node's agent starts on its own: the hives are populated one
	// after the other (the Kubernetes client sets client-go's global
	// logger) and started at once, as the peer starts its informers.
	ws := &apiaryWatchers{}
	for w := range s.Watchers {
		h, ipc, err := populateApiaryWatcher(kubeconfig, s, w)
		if err != nil {
			return nil, errors.Join(err, ws.stop())
		}
		ws.hives, ws.ipcs = append(ws.hives, h), append(ws.ipcs, ipc)
	}
	errs := make([]error, s.Watchers)
	var wg sync.WaitGroup
	for w, h := range ws.hives {
		wg.Go(func() {
			if err := h.Start(ctx); err != nil {
				errs[w] = fmt.Errorf("start watcher %d: %w", w, err)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, errors.Join(err, ws.stop())
	}
	return ws, nil
}

// populateApiaryWatcher builds watcher w's hive.
func populateApiaryWatcher(kubeconfig string, s CEPSize, w int) (*hive.Hive, *ipcache.Cache, error) {
	var ipc *ipcache.Cache
	ip := s.watcherIP(w)
	h := stdhive.New(hive.Options{Logger: slog.New(slog.DiscardHandler)}, localnode.Cell, k8sclient.Cell,
		cell.Module("cep-watcher", "CiliumEndpoints -> ipcache",
			cell.Invoke(func(ceps k8sclient.CiliumEndpoints, local localnode.Store, jobs job.Group) {
				l := local.Get()
				ipc = ipcache.New(ipcache.Params{Allocator: identitycache.New(l.Cluster, nil, false, nil),
					Local: ipcache.LocalNode{Name: l.Name, IP: l.IP}, Cluster: l.Cluster})
				jobs.Add(ipc.Jobs()...)
				kw := &k8scep.Watcher{IPCache: ipc, LocalNode: l.IP, Log: slog.New(slog.DiscardHandler)}
				jobs.Add(job.OneShot("watch", func(ctx context.Context, _ cell.Health) error {
					kw.Run(ctx, ceps.Events(ctx), func() {})
					return nil
				}))
			})))
	err := h.Flags().Parse([]string{"--node-name=" + fmt.Sprintf("node-%d", w), "--node-ip=" + ip.String(),
		"--k8s-kubeconfig-path=" + kubeconfig})
	if err == nil {
		err = h.Populate()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("populate watcher %d: %w", w, err)
	}
	return h, ipc, nil
}

func (ws *apiaryWatchers) seen(w int) int { return ws.ipcs[w].Len() }

func (ws *apiaryWatchers) stop() error {
	var errs []error
	for _, h := range ws.hives {
		if h != nil {
			errs = append(errs, h.Stop(context.Background()))
		}
	}
	return errors.Join(errs...)
}

// peerWatchers are one client-go dynamic informer per simulated node,
// each with its own HTTP client, the agent's rate limits and its
// transform.
type peerWatchers struct {
	stopCh    chan struct{}
	wg        sync.WaitGroup
	informers []cache.SharedIndexInformer
}

func startPeerWatchers(_ context.Context, kubeconfig string, s CEPSize) (cepWatchers, error) {
	p := &peerWatchers{stopCh: make(chan struct{})}
	for range s.Watchers {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, errors.Join(err, p.stop())
		}
		def := k8sclient.DefaultConfig
		cfg.QPS, cfg.Burst = float32(def.K8sClientQPS), def.K8sClientBurst
		hc, err := rest.HTTPClientFor(cfg)
		if err != nil {
			return nil, errors.Join(err, p.stop())
		}
		dyn, err := dynamic.NewForConfigAndClient(cfg, hc)
		if err != nil {
			return nil, errors.Join(err, p.stop())
		}
		f := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
		inf := f.ForResource(k8sclient.CiliumEndpointResource).Informer()
		if err := inf.SetTransform(dropManagedFields); err != nil {
			return nil, errors.Join(err, p.stop())
		}
		p.informers = append(p.informers, inf)
		p.wg.Go(func() { inf.Run(p.stopCh) })
	}
	return p, nil
}

// seen counts the other nodes' endpoints, as the agent's ipcache holds
// them, once the informer has synced.
func (p *peerWatchers) seen(w int) int {
	if !p.informers[w].HasSynced() {
		return 0
	}
	return len(p.informers[w].GetStore().ListKeys())
}

func (p *peerWatchers) stop() error {
	close(p.stopCh)
	p.wg.Wait()
	return nil
}
