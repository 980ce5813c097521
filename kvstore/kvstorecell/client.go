package kvstorecell

import (
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/kvstore"
)

// HeartbeatConfig enables the heartbeat writer.
type HeartbeatConfig struct {
	// KVStoreHeartbeatWriter makes this agent update layout.HeartbeatKey
	// every minute. One writer per cluster is enough; every agent's
	// status fails when the heartbeat is older than 2 minutes.
	KVStoreHeartbeatWriter bool
}

// DefaultHeartbeatConfig has the writer on: without one, every agent's
// KVStore status would fail.
var DefaultHeartbeatConfig = HeartbeatConfig{KVStoreHeartbeatWriter: true}

// Flags registers --kvstore-heartbeat-writer.
func (def HeartbeatConfig) Flags(fs *pflag.FlagSet) {
	fs.Bool("kvstore-heartbeat-writer", def.KVStoreHeartbeatWriter,
		"Update the kvstore heartbeat key every minute (one writer per cluster is enough)")
}

type clientParams struct {
	cell.In

	Config    kvstore.Config
	Heartbeat HeartbeatConfig
	Lifecycle cell.Lifecycle
	Log       *slog.Logger
	Health    cell.Health
	Metrics   *kvstore.Metrics
	Status    status.Refresher `optional:"true"`
}

// newClient validates the configuration (reading the etcd config file and
// the TLS files, so mistakes stop the agent at once) and connects at start.
func newClient(p clientParams) (kvstore.Client, error) {
	c := kvstore.NewDeferredClient(p.Config.KVStore != "")
	if !c.Enabled() {
		p.Health.Stopped("disabled: --kvstore is empty (standalone mode)")
		return c, nil
	}
	opts, err := kvstore.EtcdOptionsFromConfig(p.Config)
	if err != nil {
		return nil, &cell.ConfigError{Err: err} // names --kvstore-opt
	}
	opts.Logger, opts.Metrics = p.Log, p.Metrics
	if p.Status != nil {
		opts.OnStatusChange = p.Status.Refresh // the KVStore line follows at once
	}
	var stopHeartbeat func()
	p.Lifecycle.Append(cell.Hook{
		OnStart: func(cell.HookContext) error {
			b, err := kvstore.NewEtcdBackend(opts)
			if err != nil {
				return err
			}
			c.SetBackend(b)
			p.Log.Info("Connecting to etcd", "endpoints", opts.Config.Endpoints, "lease-ttl", opts.LeaseTTL)
			if p.Heartbeat.KVStoreHeartbeatWriter {
				stopHeartbeat = kvstore.StartHeartbeat(b, kvstore.HeartbeatInterval, p.Log)
			}
			return nil
		},
		OnStop: func(cell.HookContext) error {
			if stopHeartbeat != nil {
				stopHeartbeat()
			}
			if b := c.Backend(); b != nil {
				b.Close()
			}
			return nil
		},
	})
	return c, nil
}
