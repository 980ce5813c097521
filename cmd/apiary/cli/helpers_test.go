package cli_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/controller"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/cmd/apiary-agent/agent"
	"github.com/apiary-net/apiary/cmd/apiary/cli"
)

// startAgent starts the whole agent (plus extra cells) on a temporary
// socket and state dir and returns the socket.
func startAgent(t *testing.T, extra ...cell.Cell) string {
	t.Helper()
	dir := t.TempDir()
	socket := filepath.Join(dir, "apiary.sock")
	flags := []string{"socket-path=" + socket, "state-dir=" + filepath.Join(dir, "state")}
	celltest.StartWithFlags(t, flags, append([]cell.Cell{agent.Infrastructure}, extra...)...)
	return socket
}

// run runs the CLI in-process against socket.
func run(t *testing.T, socket string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = cli.Execute(context.Background(), append([]string{"--socket", socket}, args...), &out, &errOut)
	return code, out.String(), errOut.String()
}

var errEtcd = errors.New("etcd unreachable")

// broken is a module with a failing status provider, a degraded health
// scope and a controller that keeps failing.
var broken = cell.Module("broken", "Always broken",
	cell.Provide(func(m cell.FullModuleID) status.ProviderOut {
		return status.NewProviderOut(m, "KVStore", func(context.Context) status.Report {
			return status.Report{State: status.Failure, Message: "not connected", Details: []string{"dial 127.0.0.1:2379: refused"}}
		})
	}),
	cell.Invoke(func(g controller.Manager, lc cell.Lifecycle, h cell.Health) {
		// The first run fails; the retry (which begins only after the
		// failure is recorded) signals and then blocks until stop.
		failed := make(chan struct{})
		var runs atomic.Int32
		g.Update("sync-kvstore", controller.Params{
			DoFunc: func(ctx context.Context) error {
				if runs.Add(1) == 1 {
					return errEtcd
				}
				close(failed)
				<-ctx.Done()
				return ctx.Err()
			},
			ErrorRetryBaseDuration: time.Millisecond,
		})
		// The manager's hook (appended when g was made) has started the
		// controller; wait for its failure to be recorded so that the
		// status probes, which run once the hive has started, see it.
		lc.Append(cell.Hook{OnStart: func(ctx cell.HookContext) error {
			h.NewScope("watcher").Degraded("watch failed", errEtcd)
			select {
			case <-failed:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}})
	}),
)
