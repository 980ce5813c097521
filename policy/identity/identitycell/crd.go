package identitycell

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/identity/identitycache"
)

// The values of --identity-allocation-mode.
const (
	modeCRD     = "crd"
	modeKVStore = "kvstore"
)

// Where the collector's lease lives: one agent of the cluster holds it
// and collects the unused CiliumIdentities.
const (
	gcLeaseNamespace = "kube-system"
	gcLeaseName      = "apiary-identity-gc"
	gcLeaseDuration  = 15 * time.Second
)

// allocationMode decides the mode from the flag and what is configured.
// Without the flag: kvstore with a kvstore, crd with Kubernetes, else
// standalone (in memory, journalled in the state dir).
func allocationMode(flag string, kvstoreEnabled, k8sEnabled bool) (identitycache.Mode, error) {
	switch flag {
	case modeKVStore:
		if !kvstoreEnabled {
			return 0, errors.New("--identity-allocation-mode=kvstore: no kvstore is configured (set --kvstore and --kvstore-opt)")
		}
		return identitycache.KVStore, nil
	case modeCRD:
		if !k8sEnabled {
			return 0, fmt.Errorf("--identity-allocation-mode=crd: %w", k8s.ErrDisabled)
		}
		return identitycache.CRD, nil
	case "":
		switch {
		case kvstoreEnabled:
			return identitycache.KVStore, nil
		case k8sEnabled:
			return identitycache.CRD, nil
		}
		return identitycache.Standalone, nil
	}
	return 0, fmt.Errorf("--identity-allocation-mode: %q is not %q or %q", flag, modeCRD, modeKVStore)
}

// startCRD starts the CiliumIdentity allocator's jobs: the watch of
// every CiliumIdentity (its first list opens synced, a cache of the
// cache-sync gate), the repair and heartbeat of the identities in local
// use, and, with --identity-gc-interval, the lease election and the
// garbage collector.
func startCRD(p managerParams, m *identitycache.Manager, synced func()) {
	cluster := p.LocalNode.Get().Cluster
	a := m.StartCRD(p.Clientset.Dynamic().Resource(k8s.CiliumIdentityResource), p.Log)
	first, last := identity.ClusterRange(cluster)
	p.Log.Info("Allocating global identities as CiliumIdentity objects", "cluster", cluster.ClusterName,
		"range", fmt.Sprintf("%d..%d", first, last))
	p.Jobs.Add(
		job.OneShot("identity-crd-watch", func(ctx context.Context, _ cell.Health) error {
			a.Watch(ctx, p.CIDs.Events(ctx), synced)
			return nil
		}),
		job.OneShot("identity-crd-sync-local-keys", func(ctx context.Context, _ cell.Health) error {
			a.RunSync(ctx, syncLocalKeysInterval)
			return nil
		}),
	)
	if p.Config.IdentityGCInterval <= 0 {
		return
	}
	elector, err := k8s.NewLeaseElector(p.Clientset, gcLeaseNamespace, gcLeaseName, p.LocalNode.Get().Name, gcLeaseDuration, p.Log)
	if err != nil {
		p.Log.Error("Identity garbage collection is off on this agent", "error", err)
		return
	}
	gc := identitycache.NewCRDGC(a, p.Config.IdentityHeartbeatTimeout, p.Log)
	p.Jobs.Add(
		job.OneShot("identity-gc-lease", func(ctx context.Context, _ cell.Health) error {
			elector.Run(ctx)
			return nil
		}),
		job.Timer("identity-gc", func(ctx context.Context) error {
			if !elector.IsLeader() {
				gc.Reset()
				return nil
			}
			// The pods' identities are named by CiliumEndpoints once
			// every cache has listed.
			if err := p.K8sCaches.WaitForCacheSync(ctx); err != nil {
				return err
			}
			ceps, err := p.CEPs.Store(ctx)
			if err != nil {
				return err
			}
			stats, err := gc.Round(ctx, time.Now(), identitycache.IdentitiesOfEndpoints(ceps.List()))
			p.Metrics.GCDeleted.Add(float64(stats.Deleted))
			return err
		}, p.Config.IdentityGCInterval),
	)
}
