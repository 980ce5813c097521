package policy

import (
	"context"
	"fmt"

	"github.com/apiary-net/apiary/policy/policyapi"
)

// Objects is the policy source of Kubernetes objects (NetworkPolicy,
// CiliumNetworkPolicy, CiliumClusterwideNetworkPolicy): each object's
// rules are replaced whole when it changes and deleted with it, apart
// from every other source's. The watchers of package policy/k8spolicy
// feed it; policy/policycell implements it.
type Objects interface {
	// Options are the parser options of the agent.
	Options() policyapi.Options
	// Upsert replaces the rules of the object p was parsed from (its
	// kind, namespace and name) by p's, in one revision, which it returns.
	// It clears an earlier rejection of the object.
	Upsert(ctx context.Context, p *policyapi.Policy) (uint64, error)
	// Delete deletes the rules of an object and forgets its rejection.
	Delete(ctx context.Context, obj ObjectKey) (uint64, error)
	// Reject records that the object's current content was refused (the
	// rules of its previous content, if any, stay in force); the "Policy"
	// status line names it until it is fixed or deleted.
	Reject(obj ObjectKey, err error)
	// Apply applies the changes of several objects (a watcher's initial
	// listing) as Upsert, Delete and Reject would one by one, but in one
	// revision, which it returns, with one CIDR identity sync and one
	// regeneration request, named by reason. An object may appear once in
	// a batch; a batch naming one twice is refused whole.
	Apply(ctx context.Context, reason string, b Batch) (uint64, error)
}

// Batch is the changes of several objects that Objects.Apply applies
// together.
type Batch struct {
	// Upserts replace the rules of the objects they were parsed from.
	Upserts []*policyapi.Policy
	// Deletes lose their rules.
	Deletes []ObjectKey
	// Rejects are refused objects, recorded as Objects.Reject does.
	Rejects []Rejection
}

// Len is the number of objects in b.
func (b Batch) Len() int { return len(b.Upserts) + len(b.Deletes) + len(b.Rejects) }

// Rejection is an object refused with a reason.
type Rejection struct {
	Key ObjectKey
	Err error
}

// ObjectKey names a Kubernetes policy object.
type ObjectKey struct {
	Kind      policyapi.Kind
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
