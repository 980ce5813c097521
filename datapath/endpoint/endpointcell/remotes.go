package endpointcell

import (
	"context"
	"log/slog"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/datapath"
)

// remotesGate holds the endpoints' first regeneration (restored ones and
// those of policy changes) until the remote clusters of ClusterMesh have
// synced or --clustermesh-sync-timeout passed, so that no endpoint gets
// a policy computed without the remote identities it selects. Endpoints
// created through the API in the meantime are regenerated at once.
type remotesGate struct {
	remotes datapath.RemoteSync
	log     *slog.Logger
	ready   chan struct{}
}

func newRemotesGate(remotes datapath.RemoteSync, log *slog.Logger) *remotesGate {
	g := &remotesGate{remotes: remotes, log: log, ready: make(chan struct{})}
	if remotes == nil {
		close(g.ready)
	}
	return g
}

// job waits for the remotes once and opens the gate.
func (g *remotesGate) job() job.Job {
	return job.OneShot("endpoint-wait-for-remote-clusters", func(ctx context.Context, health cell.Health) error {
		select {
		case <-g.ready:
			return nil
		default:
		}
		health.OK("waiting for the remote clusters' sync")
		if err := g.remotes.WaitForRemotesSynced(ctx); err != nil {
			if ctx.Err() != nil {
				return err
			}
			g.log.Warn("Regenerating endpoints without every remote cluster synced", "error", err)
		}
		close(g.ready)
		return nil
	})
}

// wait returns when the gate is open or ctx ends.
func (g *remotesGate) wait(ctx context.Context) error {
	select {
	case <-g.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
