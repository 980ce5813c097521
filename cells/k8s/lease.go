package k8s

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// leaseTimeFormat is metav1.MicroTime's RFC 3339 form.
const leaseTimeFormat = "2006-01-02T15:04:05.000000Z07:00"

// LeaseElector elects one holder among the agents through a
// coordination.k8s.io/v1 Lease, as client-go's leader election does
// (which the agent cannot link: it needs client-go's clientset). A
// holder renews the lease every duration/3; another agent takes it over
// once it has seen no renewal for duration, by its own clock (no clock
// of two machines is compared). A holder leads until duration after the
// start of its last successful renewal, so that two agents never lead
// at once while their clocks run at the same rate.
type LeaseElector struct {
	client   dynamic.ResourceInterface
	name     string
	holder   string
	duration time.Duration
	log      *slog.Logger

	mu          sync.Mutex
	validUntil  time.Time // leads until then
	observed    string    // the holder and renew time last read
	observedAt  time.Time // when observed changed
	transitions int64
}

// NewLeaseElector returns an elector of the lease namespace/name for
// holder (unique per agent: the node name). It needs Kubernetes.
func NewLeaseElector(cs Clientset, namespace, name, holder string, duration time.Duration, log *slog.Logger) (*LeaseElector, error) {
	switch {
	case !cs.IsEnabled():
		return nil, ErrDisabled
	case namespace == "" || name == "" || holder == "":
		return nil, fmt.Errorf("lease elector: namespace %q, name %q and holder %q must be set", namespace, name, holder)
	case duration <= 0:
		return nil, fmt.Errorf("lease elector: duration %s is not positive", duration)
	}
	return &LeaseElector{client: cs.Dynamic().Resource(LeaseResource).Namespace(namespace), name: name,
		holder: holder, duration: duration, log: log.With("lease", namespace+"/"+name)}, nil
}

// IsLeader reports whether this holder leads now.
func (e *LeaseElector) IsLeader() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return time.Now().Before(e.validUntil)
}

// Run tries to take or renew the lease every duration/3 until ctx ends,
// then gives it up if it holds it.
func (e *LeaseElector) Run(ctx context.Context) {
	tick := time.NewTicker(e.duration / 3)
	defer tick.Stop()
	for {
		was := e.IsLeader()
		leads, err := e.TryAcquireOrRenew(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			e.log.Warn("Taking or renewing the lease failed", "error", err)
		case leads && !was:
			e.log.Info("Took the lease: this agent leads", "holder", e.holder)
		case !leads && was:
			e.log.Info("Lost the lease", "holder", e.holder)
		}
		select {
		case <-ctx.Done():
			e.release()
			return
		case <-tick.C:
		}
	}
}

// TryAcquireOrRenew makes one attempt to hold the lease and reports
// whether this holder leads.
func (e *LeaseElector) TryAcquireOrRenew(ctx context.Context) (bool, error) {
	start := time.Now()
	obj, err := e.client.Get(ctx, e.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		obj = &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
			"metadata": map[string]any{"name": e.name},
		}}
		e.setSpec(obj, start, true)
		if _, err := e.client.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			return e.lost(), ignoreConflict(err)
		}
		return e.won(start), nil
	}
	if err != nil {
		return e.lost(), fmt.Errorf("read lease %s: %w", e.name, err)
	}
	holder, _, _ := unstructured.NestedString(obj.Object, "spec", "holderIdentity")
	renew, _, _ := unstructured.NestedString(obj.Object, "spec", "renewTime")
	if holder != e.holder && holder != "" && !e.expired(holder+"@"+renew, start) {
		return e.lost(), nil
	}
	e.setSpec(obj, start, holder != e.holder)
	if _, err := e.client.Update(ctx, obj, metav1.UpdateOptions{}); err != nil {
		return e.lost(), ignoreConflict(err)
	}
	return e.won(start), nil
}

// expired records the lease's holder and renew time and reports whether
// they have not changed for duration.
func (e *LeaseElector) expired(record string, now time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if record != e.observed {
		e.observed, e.observedAt = record, now
		return false
	}
	return now.Sub(e.observedAt) > e.duration
}

// setSpec makes this holder the lease's, renewed at now.
func (e *LeaseElector) setSpec(obj *unstructured.Unstructured, now time.Time, takeOver bool) {
	spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
	if spec == nil {
		spec = map[string]any{}
	}
	spec["holderIdentity"] = e.holder
	spec["leaseDurationSeconds"] = int64(max(1, e.duration.Round(time.Second)/time.Second))
	spec["renewTime"] = now.UTC().Format(leaseTimeFormat)
	if takeOver {
		spec["acquireTime"] = now.UTC().Format(leaseTimeFormat)
		n, _, _ := unstructured.NestedInt64(spec, "leaseTransitions")
		spec["leaseTransitions"] = n + 1
	}
	_ = unstructured.SetNestedMap(obj.Object, spec, "spec")
}

func (e *LeaseElector) won(start time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.validUntil = start.Add(e.duration)
	return true
}

func (e *LeaseElector) lost() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.validUntil = time.Time{}
	return false
}

// release gives the lease up, so that another agent takes it at once.
func (e *LeaseElector) release() {
	e.lost()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	obj, err := e.client.Get(ctx, e.name, metav1.GetOptions{})
	if err != nil {
		return
	}
	if holder, _, _ := unstructured.NestedString(obj.Object, "spec", "holderIdentity"); holder != e.holder {
		return
	}
	_ = unstructured.SetNestedField(obj.Object, "", "spec", "holderIdentity")
	if _, err := e.client.Update(ctx, obj, metav1.UpdateOptions{}); err != nil {
		e.log.Debug("Giving up the lease failed", "error", err)
	}
}

// ignoreConflict turns the errors of losing a race for the lease into
// no error: another agent wrote it first.
func ignoreConflict(err error) error {
	if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
		return nil
	}
	return fmt.Errorf("write lease: %w", err)
}
