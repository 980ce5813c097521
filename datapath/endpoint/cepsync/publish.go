package cepsync

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/datapath/endpoint"
	"github.com/apiary-net/apiary/policy/identity"
)

// publisher writes the CiliumEndpoints of this node's endpoints.
type publisher struct {
	client     dynamic.NamespaceableResourceInterface
	nodeIP     string
	endpoints  *endpoint.Manager
	identities identity.Allocator
	log        *slog.Logger

	ceps k8s.Store[*unstructured.Unstructured] // every CiliumEndpoint
	pods k8s.Store[*corev1.Pod]                // this node's pods

	mu sync.Mutex
	// written is the status last written per object, so that an object
	// written but not yet back in the cache is not written again.
	written map[k8s.Key]map[string]any
}

// desired returns the status of every pod endpoint that has an identity.
func (p *publisher) desired() map[k8s.Key]endpoint.Endpoint {
	out := map[k8s.Key]endpoint.Endpoint{}
	for _, ep := range p.endpoints.Endpoints() {
		if ep.Pod.IsZero() || ep.Identity == 0 || ep.State == endpoint.StateDisconnecting {
			continue
		}
		out[k8s.Key{Namespace: ep.Pod.Namespace, Name: ep.Pod.Name}] = ep
	}
	return out
}

// reconcile makes the CiliumEndpoints of this node what the endpoints
// say; stale ones (of this node, backed by no endpoint) are deleted once
// restored is true.
func (p *publisher) reconcile(ctx context.Context, restored bool) error {
	want := p.desired()
	var errs []error
	for key, ep := range want {
		if err := p.publish(ctx, key, ep); err != nil {
			errs = append(errs, err)
		}
	}
	for _, obj := range p.ceps.List() {
		key := k8s.Key{Namespace: obj.GetNamespace(), Name: obj.GetName()}
		if _, ok := want[key]; ok || NodeOf(obj) != p.nodeIP {
			continue
		}
		if !restored {
			continue // it may be a restored endpoint's
		}
		if err := p.remove(ctx, key, obj.GetUID()); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// publish creates or updates the CiliumEndpoint of one endpoint.
func (p *publisher) publish(ctx context.Context, key k8s.Key, ep endpoint.Endpoint) error {
	pod, ok := p.pods.Get(key)
	if !ok {
		return fmt.Errorf("publish CiliumEndpoint %s: its pod is not (yet) in the cache of this node's pods", key)
	}
	var idLabels = ep.Labels
	if ident := p.identities.LookupIdentityByID(ep.Identity); ident != nil {
		idLabels = ident.Labels
	}
	st := Status(ep, p.nodeIP, idLabels)
	cur, exists := p.ceps.Get(key)
	if exists && sameStatus(cur, st) && ownedBy(cur, pod.UID) {
		p.setWritten(key, st)
		return nil
	}
	if w := p.getWritten(key); w != nil && equalValues(w, st) {
		return nil // written, not yet back in the cache (an event of the key forgets it)
	}
	client := p.client.Namespace(key.Namespace)
	var err error
	if !exists {
		_, err = client.Create(ctx, newObject(ep.Pod, pod.UID, st), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create CiliumEndpoint %s: it exists; updating once the cache has it", key)
		}
	} else {
		obj := cur.DeepCopy()
		obj.Object["status"] = st
		setOwner(obj, pod.Name, pod.UID)
		_, err = client.Update(ctx, obj, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("write CiliumEndpoint %s: %w", key, err)
	}
	p.setWritten(key, st)
	return nil
}

// remove deletes a stale CiliumEndpoint of this node.
func (p *publisher) remove(ctx context.Context, key k8s.Key, uid types.UID) error {
	err := p.client.Namespace(key.Namespace).Delete(ctx, key.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete CiliumEndpoint %s: %w", key, err)
	}
	p.log.Info("Deleted the CiliumEndpoint of an endpoint that is gone", "ciliumendpoint", key.String())
	p.mu.Lock()
	delete(p.written, key)
	p.mu.Unlock()
	return nil
}

// forget drops what was written of key: the cache has news of it.
func (p *publisher) forget(key k8s.Key) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.written, key)
}

func (p *publisher) setWritten(key k8s.Key, st map[string]any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.written[key] = st
}

func (p *publisher) getWritten(key k8s.Key) map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.written[key]
}
