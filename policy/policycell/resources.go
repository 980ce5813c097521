package policycell

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/apiary-net/apiary/policy/api"
	"github.com/apiary-net/apiary/policy/labels"
)

// PolicySourceK8s is the value of the source label
// (apiary:io.apiary.policy.source) of the rules of Kubernetes objects.
const PolicySourceK8s = "k8s"

// k8sSourceLabel marks rules of Kubernetes objects.
var k8sSourceLabel = labels.New(SourceApiary, LabelPolicySource, PolicySourceK8s)

// Objects is the policy source of Kubernetes objects (NetworkPolicy,
// CiliumNetworkPolicy, CiliumClusterwideNetworkPolicy): each object's
// rules are replaced whole when it changes and deleted with it, apart
// from every other source's. The watchers of package policy/k8s feed it.
type Objects interface {
	// Options are the parser options of the agent.
	Options() api.Options
	// Upsert replaces the rules of the object p was parsed from (its
	// kind, namespace and name) by p's, in one revision, which it returns.
	// It clears an earlier rejection of the object.
	Upsert(ctx context.Context, p *api.Policy) (uint64, error)
	// Delete deletes the rules of an object and forgets its rejection.
	Delete(ctx context.Context, obj ObjectKey) (uint64, error)
	// Reject records that the object's current content was refused (the
	// rules of its previous content, if any, stay in force); the "Policy"
	// status line names it until it is fixed or deleted.
	Reject(obj ObjectKey, err error)
}

// ObjectKey names a Kubernetes policy object.
type ObjectKey struct {
	Kind      api.Kind
	Namespace string
	Name      string
}

// String is "CiliumNetworkPolicy default/allow-db".
func (k ObjectKey) String() string {
	if k.Namespace == "" {
		return fmt.Sprintf("%s %s", k.Kind, k.Name)
	}
	return fmt.Sprintf("%s %s/%s", k.Kind, k.Namespace, k.Name)
}

// labels are the labels every rule of the object carries: the source and
// Cilium's origin labels without the uid (a re-created object replaces
// the rules of the one it follows).
func (k ObjectKey) labels() labels.Labels {
	ls := []labels.Label{
		k8sSourceLabel,
		labels.New(labels.SourceK8s, api.LabelPolicyDerivedFrom, string(k.Kind)),
		labels.New(labels.SourceK8s, api.LabelPolicyName, k.Name),
	}
	if k.Namespace != "" {
		ls = append(ls, labels.New(labels.SourceK8s, api.LabelPolicyNamespace, k.Namespace))
	}
	return labels.FromSlice(ls)
}

// k8sObjects tracks the objects in force and the rejected ones.
type k8sObjects struct {
	mu       sync.Mutex
	rules    map[ObjectKey]int   // rules in force per object
	rejected map[ObjectKey]error // the last refusal of an object
}

func newK8sObjects() *k8sObjects {
	return &k8sObjects{rules: map[ObjectKey]int{}, rejected: map[ObjectKey]error{}}
}

// objectsSource implements Objects on the loader.
type objectsSource struct{ l *loader }

var _ Objects = objectsSource{}

func newObjects(l *loader) Objects { return objectsSource{l} }

func (o objectsSource) Options() api.Options { return o.l.opts }

func (o objectsSource) Upsert(ctx context.Context, p *api.Policy) (uint64, error) {
	key := ObjectKey{Kind: p.Kind, Namespace: p.Namespace, Name: p.Name}
	origin := key.labels()
	rules := make([]*api.Rule, 0, len(p.Rules))
	for _, r := range p.Rules {
		r.Labels = r.Labels.With(k8sSourceLabel)
		rules = append(rules, r)
	}
	rev, err := o.l.change(ctx, key.String(), func() uint64 {
		return o.l.repo.ReplaceMatchingAny([]labels.Labels{origin}, rules...)
	})
	k := o.l.k8s
	k.mu.Lock()
	defer k.mu.Unlock()
	k.rules[key] = len(rules)
	delete(k.rejected, key)
	return rev, err
}

func (o objectsSource) Delete(ctx context.Context, key ObjectKey) (uint64, error) {
	rev, err := o.l.change(ctx, "deleted "+key.String(), func() uint64 {
		r, _ := o.l.repo.DeleteByLabels(key.labels())
		return r
	})
	k := o.l.k8s
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.rules, key)
	delete(k.rejected, key)
	return rev, err
}

func (o objectsSource) Reject(key ObjectKey, err error) {
	k := o.l.k8s
	k.mu.Lock()
	defer k.mu.Unlock()
	k.rejected[key] = err
}

// status returns the number of objects in force, the names of the
// rejected ones and a detail line for each.
func (k *k8sObjects) status() (objects int, rejected, details []string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	keys := slices.SortedFunc(maps.Keys(k.rejected), func(a, b ObjectKey) int {
		return strings.Compare(a.String(), b.String())
	})
	for _, key := range keys {
		rejected = append(rejected, key.String())
		kept := ""
		if n := k.rules[key]; n > 0 {
			kept = fileState{rules: n}.keptRules()
		}
		details = append(details, fmt.Sprintf("%s rejected: %v%s", key, k.rejected[key], kept))
	}
	return len(k.rules), rejected, details
}
