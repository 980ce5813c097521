package policycell

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// PolicySourceK8s is the value of the source label
// (apiary:io.apiary.policy.source) of the rules of Kubernetes objects.
const PolicySourceK8s = "k8s"

// k8sSourceLabel marks rules of Kubernetes objects.
var k8sSourceLabel = labels.New(SourceApiary, LabelPolicySource, PolicySourceK8s)

// checkBatch refuses a batch naming an object twice.
func checkBatch(b policy.Batch) error {
	seen := make(map[policy.ObjectKey]bool, b.Len())
	keys := make([]policy.ObjectKey, 0, b.Len())
	for _, p := range b.Upserts {
		keys = append(keys, policyKey(p))
	}
	keys = append(keys, b.Deletes...)
	for _, r := range b.Rejects {
		keys = append(keys, r.Key)
	}
	for _, k := range keys {
		if seen[k] {
			return fmt.Errorf("apply batch: %s appears twice", k)
		}
		seen[k] = true
	}
	return nil
}

// objectLabels are the labels every rule of the object carries: the source and
// Cilium's origin labels without the uid (a re-created object replaces
// the rules of the one it follows).
func objectLabels(k policy.ObjectKey) labels.Labels {
	ls := []labels.Label{
		k8sSourceLabel,
		labels.New(labels.SourceK8s, policyapi.LabelPolicyDerivedFrom, string(k.Kind)),
		labels.New(labels.SourceK8s, policyapi.LabelPolicyName, k.Name),
	}
	if k.Namespace != "" {
		ls = append(ls, labels.New(labels.SourceK8s, policyapi.LabelPolicyNamespace, k.Namespace))
	}
	return labels.FromSlice(ls)
}

// k8sObjects tracks the objects in force and the rejected ones.
type k8sObjects struct {
	mu       sync.Mutex
	rules    map[policy.ObjectKey]int   // rules in force per object
	rejected map[policy.ObjectKey]error // the last refusal of an object
}

func newK8sObjects() *k8sObjects {
	return &k8sObjects{rules: map[policy.ObjectKey]int{}, rejected: map[policy.ObjectKey]error{}}
}

// objectsSource implements Objects on the importer.
type objectsSource struct{ l *importer }

var _ policy.Objects = objectsSource{}

func newObjects(l *importer) policy.Objects { return objectsSource{l} }

func (o objectsSource) Options() policyapi.Options { return o.l.opts }

// policyKey is the key of the object p was parsed from.
func policyKey(p *policyapi.Policy) policy.ObjectKey {
	return policy.ObjectKey{Kind: p.Kind, Namespace: p.Namespace, Name: p.Name}
}

// k8sRules returns p's rules marked as rules of a Kubernetes object.
func k8sRules(p *policyapi.Policy) []*policyapi.Rule {
	rules := make([]*policyapi.Rule, 0, len(p.Rules))
	for _, r := range p.Rules {
		r.Labels = r.Labels.With(k8sSourceLabel)
		rules = append(rules, r)
	}
	return rules
}

func (o objectsSource) Upsert(ctx context.Context, p *policyapi.Policy) (uint64, error) {
	key := policyKey(p)
	o.l.warns.set(key.String(), p)
	rules := k8sRules(p)
	rev, err := o.l.change(ctx, key.String(), func() uint64 {
		return o.l.repo.ReplaceMatchingAny([]labels.Labels{objectLabels(key)}, rules...)
	})
	k := o.l.k8s
	k.mu.Lock()
	defer k.mu.Unlock()
	k.rules[key] = len(rules)
	delete(k.rejected, key)
	return rev, err
}

func (o objectsSource) Delete(ctx context.Context, key policy.ObjectKey) (uint64, error) {
	o.l.warns.set(key.String())
	rev, err := o.l.change(ctx, "deleted "+key.String(), func() uint64 {
		r, _ := o.l.repo.DeleteByLabels(objectLabels(key))
		return r
	})
	k := o.l.k8s
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.rules, key)
	delete(k.rejected, key)
	return rev, err
}

func (o objectsSource) Apply(ctx context.Context, reason string, b policy.Batch) (uint64, error) {
	if err := checkBatch(b); err != nil {
		return 0, err
	}
	origins := make([]labels.Labels, 0, len(b.Upserts)+len(b.Deletes))
	counts := make(map[policy.ObjectKey]int, len(b.Upserts))
	var rules []*policyapi.Rule
	for _, p := range b.Upserts {
		key := policyKey(p)
		o.l.warns.set(key.String(), p)
		pr := k8sRules(p)
		origins = append(origins, objectLabels(key))
		counts[key] = len(pr)
		rules = append(rules, pr...)
	}
	for _, key := range b.Deletes {
		o.l.warns.set(key.String())
		origins = append(origins, objectLabels(key))
	}
	var (
		rev uint64
		err error
	)
	if len(origins) > 0 {
		rev, err = o.l.change(ctx, reason, func() uint64 { return o.l.repo.ReplaceMatchingAny(origins, rules...) })
	} else {
		rev = o.l.repo.Revision()
	}
	k := o.l.k8s
	k.mu.Lock()
	defer k.mu.Unlock()
	for key, n := range counts {
		k.rules[key] = n
		delete(k.rejected, key)
	}
	for _, key := range b.Deletes {
		delete(k.rules, key)
		delete(k.rejected, key)
	}
	for _, r := range b.Rejects {
		k.rejected[r.Key] = r.Err
	}
	return rev, err
}

func (o objectsSource) Reject(key policy.ObjectKey, err error) {
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
	keys := slices.SortedFunc(maps.Keys(k.rejected), func(a, b policy.ObjectKey) int {
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
