package k8s

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	k8sclient "github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/policy/api"
	"github.com/apiary-net/apiary/policy/policycell"
)

// Cell watches NetworkPolicies, CiliumNetworkPolicies and
// CiliumClusterwideNetworkPolicies into the policy repository. It needs
// the Kubernetes client cell and the policy cell; without Kubernetes it
// does nothing.
var Cell = cell.Module("policy-k8s", "Kubernetes policy watchers: NetworkPolicy, CNP, CCNP",
	cell.Invoke(startWatchers),
)

type watcherParams struct {
	cell.In

	Clientset k8sclient.Clientset
	NPs       k8sclient.NetworkPolicies
	CNPs      k8sclient.CiliumNetworkPolicies
	CCNPs     k8sclient.CiliumClusterwideNetworkPolicies
	Objects   policycell.Objects
	Gate      k8sclient.CacheSync
	Jobs      job.Group
	Log       *slog.Logger
}

// startWatchers registers the three caches with the gate and starts one
// watcher job per kind.
func startWatchers(p watcherParams) {
	if !p.Clientset.IsEnabled() {
		return
	}
	p.Jobs.Add(
		watchJob(p, api.KindNetworkPolicy, p.NPs, networkPolicyJSON),
		watchJob(p, api.KindCiliumNetworkPolicy, p.CNPs, unstructuredJSON),
		watchJob(p, api.KindCiliumClusterwideNetworkPolicy, p.CCNPs, unstructuredJSON),
	)
}

// watchJob applies the events of one resource until the hive stops.
func watchJob[T runtime.Object](p watcherParams, kind api.Kind, res k8sclient.Resource[T], encode func(T) ([]byte, error)) job.Job {
	w := &watcher{objects: p.Objects, log: p.Log.With("kind", kind), kind: kind}
	synced := p.Gate.Register(res.Name())
	return job.OneShot("k8s-watch-"+string(kind), func(ctx context.Context, health cell.Health) error {
		health.OK("listing")
		for ev := range res.Events(ctx) {
			switch ev.Kind {
			case k8sclient.Sync:
				synced()
				health.OK("synced")
			case k8sclient.Upsert:
				data, err := encode(ev.Object)
				if err != nil {
					err = fmt.Errorf("encode %s %s: %w", kind, ev.Key, err)
				}
				w.upsert(ctx, ev.Key, data, err)
			case k8sclient.Delete:
				w.delete(ctx, ev.Key)
			}
		}
		return nil
	})
}

// networkPolicyJSON encodes a NetworkPolicy as the document the decoder
// reads (informers leave apiVersion and kind out).
func networkPolicyJSON(np *networkingv1.NetworkPolicy) ([]byte, error) {
	np = np.DeepCopy()
	np.APIVersion, np.Kind = "networking.k8s.io/v1", string(api.KindNetworkPolicy)
	return json.Marshal(np)
}

func unstructuredJSON(u *unstructured.Unstructured) ([]byte, error) { return u.MarshalJSON() }

// watcher applies the objects of one kind.
type watcher struct {
	objects policycell.Objects
	log     *slog.Logger
	kind    api.Kind
}

func (w *watcher) key(k k8sclient.Key) policycell.ObjectKey {
	return policycell.ObjectKey{Kind: w.kind, Namespace: k.Namespace, Name: k.Name}
}

// upsert parses an object and replaces its rules; a refused object is
// logged and rejected, keeping its previous rules.
func (w *watcher) upsert(ctx context.Context, k k8sclient.Key, data []byte, encodeErr error) {
	key := w.key(k)
	err := encodeErr
	var pols []*api.Policy
	if err == nil {
		pols, err = api.ParseDocumentsContext(ctx, "kubernetes "+key.String(), data, w.objects.Options())
	}
	if err == nil && len(pols) != 1 {
		err = fmt.Errorf("parse %s: %d policies, want 1", key, len(pols))
	}
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		w.log.Warn("Rejected Kubernetes policy", "object", key.String(), "reason", err)
		w.objects.Reject(key, err)
		return
	}
	for _, warn := range pols[0].Warnings {
		w.log.Warn("Kubernetes policy accepted with a warning", "object", key.String(), "warning", warn.String())
	}
	rev, err := w.objects.Upsert(ctx, pols[0])
	if err != nil && !errors.Is(err, context.Canceled) {
		w.log.Error("Applying Kubernetes policy", "object", key.String(), "error", err)
	}
	w.log.Debug("Kubernetes policy applied", "object", key.String(), "rules", len(pols[0].Rules), "revision", rev)
}

func (w *watcher) delete(ctx context.Context, k k8sclient.Key) {
	key := w.key(k)
	rev, err := w.objects.Delete(ctx, key)
	if err != nil && !errors.Is(err, context.Canceled) {
		w.log.Error("Deleting Kubernetes policy", "object", key.String(), "error", err)
	}
	w.log.Debug("Kubernetes policy deleted", "object", key.String(), "revision", rev)
}
