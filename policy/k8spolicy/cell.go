package k8spolicy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	k8sclient "github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/policyapi"
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
	Objects   policy.Objects
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
		watchJob(p, policyapi.KindNetworkPolicy, p.NPs, networkPolicyValue),
		watchJob(p, policyapi.KindCiliumNetworkPolicy, p.CNPs, unstructuredValue),
		watchJob(p, policyapi.KindCiliumClusterwideNetworkPolicy, p.CCNPs, unstructuredValue),
	)
}

// watchJob applies the events of one resource until the hive stops: the
// initial listing as one batch when it ends (one revision, one
// regeneration request), then each change as it comes.
func watchJob[T runtime.Object](p watcherParams, kind policyapi.Kind, res k8sclient.Resource[T], value func(T) (map[string]any, error)) job.Job {
	w := &watcher{objects: p.Objects, log: p.Log.With("kind", kind), kind: kind}
	synced := p.Gate.Register(res.Name())
	return job.OneShot("k8s-watch-"+string(kind), func(ctx context.Context, health cell.Health) error {
		health.OK("listing")
		listing := newListing()
		for ev := range res.Events(ctx) {
			switch {
			case ev.Kind == k8sclient.Sync:
				if listing != nil {
					w.apply(ctx, listing)
					listing = nil
				}
				synced()
				health.OK("synced")
			case ev.Kind == k8sclient.Upsert && listing != nil:
				listing.set(w.key(ev.Key), parse(ctx, w, ev.Key, ev.Object, value))
			case ev.Kind == k8sclient.Delete && listing != nil:
				listing.set(w.key(ev.Key), parsed{deleted: true})
			case ev.Kind == k8sclient.Upsert:
				w.upsert(ctx, parse(ctx, w, ev.Key, ev.Object, value))
			case ev.Kind == k8sclient.Delete:
				w.delete(ctx, ev.Key)
			}
		}
		return nil
	})
}

// networkPolicyValue returns a NetworkPolicy as the document the decoder
// reads (informers leave apiVersion and kind out), in the values
// encoding/json would decode from its JSON.
func networkPolicyValue(np *networkingv1.NetworkPolicy) (map[string]any, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(np)
	if err != nil {
		return nil, err
	}
	m["apiVersion"], m["kind"] = "networking.k8s.io/v1", string(policyapi.KindNetworkPolicy)
	return m, nil
}

// unstructuredValue returns the object's content, which the decoder only
// reads.
func unstructuredValue(u *unstructured.Unstructured) (map[string]any, error) { return u.Object, nil }

// watcher applies the objects of one kind.
type watcher struct {
	objects policy.Objects
	log     *slog.Logger
	kind    policyapi.Kind
}

func (w *watcher) key(k k8sclient.Key) policy.ObjectKey {
	return policy.ObjectKey{Kind: w.kind, Namespace: k.Namespace, Name: k.Name}
}

// parsed is an object parsed: its policy, or why it is refused, or that
// it was deleted.
type parsed struct {
	key     policy.ObjectKey
	policy  *policyapi.Policy
	err     error
	deleted bool
}

// parse parses an object into its policy; a refusal is logged.
func parse[T runtime.Object](ctx context.Context, w *watcher, k k8sclient.Key, obj T, value func(T) (map[string]any, error)) parsed {
	key := w.key(k)
	v, err := value(obj)
	if err != nil {
		err = fmt.Errorf("convert %s: %w", key, err)
	}
	var pols []*policyapi.Policy
	if err == nil {
		pols, err = policyapi.ParseValueContext(ctx, "kubernetes "+key.String(), v, w.objects.Options())
	}
	if err == nil && len(pols) != 1 {
		err = fmt.Errorf("parse %s: %d policies, want 1", key, len(pols))
	}
	if err != nil {
		if ctx.Err() == nil {
			w.log.Warn("Rejected Kubernetes policy", "object", key.String(), "reason", err)
		}
		return parsed{key: key, err: err}
	}
	for _, warn := range pols[0].Warnings {
		w.log.Warn("Kubernetes policy accepted with a warning", "object", key.String(), "warning", warn.String())
	}
	return parsed{key: key, policy: pols[0]}
}

// upsert replaces the rules of a parsed object; a refused object is
// rejected, keeping its previous rules.
func (w *watcher) upsert(ctx context.Context, p parsed) {
	if p.err != nil {
		if ctx.Err() == nil {
			w.objects.Reject(p.key, p.err)
		}
		return
	}
	rev, err := w.objects.Upsert(ctx, p.policy)
	if err != nil && !errors.Is(err, context.Canceled) {
		w.log.Error("Applying Kubernetes policy", "object", p.key.String(), "error", err)
	}
	w.log.Debug("Kubernetes policy applied", "object", p.key.String(), "rules", len(p.policy.Rules), "revision", rev)
}

func (w *watcher) delete(ctx context.Context, k k8sclient.Key) {
	key := w.key(k)
	rev, err := w.objects.Delete(ctx, key)
	if err != nil && !errors.Is(err, context.Canceled) {
		w.log.Error("Deleting Kubernetes policy", "object", key.String(), "error", err)
	}
	w.log.Debug("Kubernetes policy deleted", "object", key.String(), "revision", rev)
}

// apply applies the initial listing as one batch.
func (w *watcher) apply(ctx context.Context, l *listing) {
	if ctx.Err() != nil {
		return
	}
	b := l.batch()
	if b.Len() == 0 {
		return
	}
	reason := fmt.Sprintf("kubernetes %s listing (%d objects)", w.kind, b.Len())
	rev, err := w.objects.Apply(ctx, reason, b)
	if err != nil && !errors.Is(err, context.Canceled) {
		w.log.Error("Applying the listed Kubernetes policies", "objects", b.Len(), "error", err)
	}
	w.log.Debug("Listed Kubernetes policies applied", "applied", len(b.Upserts), "rejected", len(b.Rejects),
		"deleted", len(b.Deletes), "revision", rev)
}

// listing is the objects of the initial listing, the last state of each,
// in the order they first came.
type listing struct {
	order   []policy.ObjectKey
	objects map[policy.ObjectKey]parsed
}

func newListing() *listing { return &listing{objects: map[policy.ObjectKey]parsed{}} }

func (l *listing) set(key policy.ObjectKey, p parsed) {
	if _, ok := l.objects[key]; !ok {
		l.order = append(l.order, key)
	}
	p.key = key
	l.objects[key] = p
}

// batch returns the listing as a batch.
func (l *listing) batch() policy.Batch {
	var b policy.Batch
	for _, key := range l.order {
		switch p := l.objects[key]; {
		case p.deleted:
			b.Deletes = append(b.Deletes, key)
		case p.err != nil:
			b.Rejects = append(b.Rejects, policy.Rejection{Key: key, Err: p.err})
		default:
			b.Upserts = append(b.Upserts, p.policy)
		}
	}
	return b
}
