package k8scep

import (
	"context"
	"log/slog"
	"net/netip"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/policy/identity/identitycache"
	"github.com/apiary-net/apiary/policy/ipcache"
)

// Cell reads the CiliumEndpoints of the other nodes into the ipcache in
// identity allocation mode crd (identitycache.Mode); otherwise, or
// without Kubernetes, it does nothing. It needs the ipcache, identity
// and Kubernetes client cells.
var Cell = cell.Module("ipcache-ciliumendpoints", "CiliumEndpoints of every node -> ipcache (identity mode crd)",
	cell.Invoke(start),
)

type params struct {
	cell.In

	Clientset k8s.Clientset
	CEPs      k8s.CiliumEndpoints
	Mode      identitycache.Mode
	IPCache   ipcache.IPCache
	Gate      k8s.CacheSync
	Local     localnode.Store
	Jobs      job.Group
	Log       *slog.Logger
}

func start(p params) {
	if !p.Clientset.IsEnabled() || p.Mode != identitycache.CRD {
		return
	}
	w := &Watcher{IPCache: p.IPCache, LocalNode: p.Local.Get().IP, Log: p.Log}
	synced := p.Gate.Register(p.CEPs.Name())
	p.Jobs.Add(job.OneShot("ciliumendpoint-ipcache", func(ctx context.Context, health cell.Health) error {
		health.OK("listing")
		w.Run(ctx, p.CEPs.Events(ctx), func() {
			synced()
			health.OK("synced")
		})
		return nil
	}))
}

// Watcher applies CiliumEndpoint events to the ipcache.
type Watcher struct {
	IPCache ipcache.IPCache
	// LocalNode is this node's IP: its CiliumEndpoints are skipped.
	LocalNode netip.Addr
	Log       *slog.Logger

	prefixes map[k8s.Key][]netip.Prefix // what each object put in
	ports    *ipcache.Interner
}

// listingBatch is how many updates of the initial listing are applied
// at once: a cluster's endpoints are not gathered into one slice first
// (every node reads all of them, each node's copy would be megabytes of
// garbage), nor applied one by one.
const listingBatch = 512

// Run applies events until the stream closes: the initial listing in
// batches of listingBatch, all of it before onSynced is called at Sync,
// then each change.
func (w *Watcher) Run(ctx context.Context, events <-chan k8s.Event[*unstructured.Unstructured], onSynced func()) {
	w.prefixes = map[k8s.Key][]netip.Prefix{}
	w.ports = ipcache.NewInterner() // the pods of a deployment all name the same ports
	var batch []ipcache.Update
	listing := true
	for ev := range events {
		switch ev.Kind {
		case k8s.Sync:
			if listing {
				w.apply(batch)
				batch, listing = batch[:0], false
				onSynced()
			}
			continue
		case k8s.Upsert:
			batch = append(batch, w.updates(ev.Key, ev.Object)...)
		case k8s.Delete:
			batch = append(batch, w.updates(ev.Key, nil)...)
		}
		if !listing || len(batch) >= listingBatch {
			// Apply copies the updates: the slice is reused.
			w.apply(batch)
			batch = batch[:0]
		}
		if ctx.Err() != nil {
			return
		}
	}
}

func (w *Watcher) apply(updates []ipcache.Update) {
	if len(updates) == 0 {
		return
	}
	if _, err := w.IPCache.Apply(updates...); err != nil {
		w.Log.Warn("Applying CiliumEndpoints to the ipcache failed", "error", err)
	}
}

// updates returns the changes that make the ipcache hold what obj (nil:
// deleted) says, and records it. A malformed object is logged and
// withdrawn whole.
func (w *Watcher) updates(key k8s.Key, obj *unstructured.Unstructured) []ipcache.Update {
	var ep Endpoint
	if obj != nil {
		var err error
		if ep, err = decode(key.Namespace, key.Name, obj.Object); err != nil {
			w.Log.Warn("Skipping a CiliumEndpoint", "ciliumendpoint", key.String(), "error", err)
			ep = Endpoint{}
		}
	}
	if ep.Node == w.LocalNode {
		ep.Prefixes = nil // this node's endpoints are local
	}
	if len(ep.Prefixes) > 0 {
		ep.Metadata.NamedPorts = w.ports.NamedPorts(ep.Metadata.NamedPorts)
	}
	res := resource(key.Namespace, key.Name)
	var out []ipcache.Update
	for _, old := range w.prefixes[key] {
		if !slices.Contains(ep.Prefixes, old) {
			out = append(out, ipcache.Update{Prefix: old, Source: Source, Resource: res, Remove: true})
		}
	}
	for _, p := range ep.Prefixes {
		out = append(out, ipcache.Update{Prefix: p, Source: Source, Resource: res, Metadata: ep.Metadata})
	}
	if len(ep.Prefixes) == 0 {
		delete(w.prefixes, key)
	} else {
		w.prefixes[key] = ep.Prefixes
	}
	return out
}
