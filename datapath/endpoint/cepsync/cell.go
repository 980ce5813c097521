package cepsync

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/datapath/endpoint"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/identity/identitycache"
)

// Cell publishes this node's endpoints as CiliumEndpoints in identity
// allocation mode crd (identitycache.Mode); otherwise, or without
// Kubernetes, it does nothing. It needs the endpoint manager, the
// identity cell and the Kubernetes client cell.
var Cell = cell.Module("endpoint-ciliumendpoints", "Publishes this node's endpoints as CiliumEndpoints (identity mode crd)",
	cell.Invoke(start),
)

// resyncInterval is how often the CiliumEndpoints are reconciled with no
// news (to retry what failed).
const resyncInterval = 30 * time.Second

type params struct {
	cell.In

	Clientset  k8s.Clientset
	CEPs       k8s.CiliumEndpoints
	Pods       k8s.Pods
	Endpoints  *endpoint.Manager
	Identities identity.Allocator
	Mode       identitycache.Mode
	Local      localnode.Store
	Jobs       job.Group
	Log        *slog.Logger
}

func start(p params) {
	if !p.Clientset.IsEnabled() || p.Mode != identitycache.CRD {
		return
	}
	pub := &publisher{client: p.Clientset.Dynamic().Resource(k8s.CiliumEndpointResource),
		nodeIP: p.Local.Get().IP.String(), endpoints: p.Endpoints, identities: p.Identities, log: p.Log,
		written: map[k8s.Key]map[string]any{}}
	var restored atomic.Bool
	trigger := job.NewTrigger("ciliumendpoint-sync", func(ctx context.Context, _ []string) error {
		if pub.ceps == nil {
			ceps, err := p.CEPs.Store(ctx)
			if err != nil {
				return err
			}
			pods, err := p.Pods.Store(ctx)
			if err != nil {
				return err
			}
			pub.ceps, pub.pods = ceps, pods
		}
		return pub.reconcile(ctx, restored.Load())
	}, job.TriggerParams{After: 20 * time.Millisecond, Max: time.Second})
	p.Endpoints.OnChange(func() { trigger.Trigger("endpoint changed") })
	p.Jobs.Add(trigger,
		job.OneShot("ciliumendpoint-watch", func(ctx context.Context, _ cell.Health) error {
			for ev := range p.CEPs.Events(ctx) {
				// Only this node's (or, for a deletion without its last
				// state, possibly this node's) matter here.
				if ev.Kind == k8s.Sync || ev.Object == nil || NodeOf(ev.Object) == pub.nodeIP {
					pub.forget(ev.Key)
					trigger.Trigger("ciliumendpoint changed")
				}
			}
			return nil
		}),
		job.OneShot("ciliumendpoint-pods", func(ctx context.Context, _ cell.Health) error {
			for range p.Pods.Events(ctx) {
				trigger.Trigger("pod changed")
			}
			return nil
		}),
		job.OneShot("ciliumendpoint-restore", func(ctx context.Context, _ cell.Health) error {
			if err := p.Endpoints.WaitForRestore(ctx); err != nil {
				return nil // stopping
			}
			restored.Store(true)
			trigger.Trigger("endpoints restored")
			return nil
		}),
		job.Timer("ciliumendpoint-resync", func(context.Context) error {
			trigger.Trigger("resync")
			return nil
		}, resyncInterval),
	)
}
