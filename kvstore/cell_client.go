package kvstore

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/pflag"

	"github.com/apiary-net/apiary/cells/cell"
)

// HeartbeatConfig enables the heartbeat writer.
type HeartbeatConfig struct {
	// KVStoreHeartbeatWriter makes this agent update cilium/.heartbeat
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

	Config    Config
	Heartbeat HeartbeatConfig
	Lifecycle cell.Lifecycle
	Log       *slog.Logger
	Health    cell.Health
	Metrics   *Metrics
}

// newClient validates the configuration (reading the etcd config file and
// the TLS files, so mistakes stop the agent at once) and connects at start.
func newClient(p clientParams) (Client, error) {
	c := &client{enabled: p.Config.KVStore != ""}
	if !c.enabled {
		p.Health.Stopped("disabled: --kvstore is empty (standalone mode)")
		return c, nil
	}
	opts, err := etcdOptions(p.Config)
	if err != nil {
		return nil, err
	}
	opts.Logger, opts.Metrics = p.Log, p.Metrics
	var stopHeartbeat func()
	p.Lifecycle.Append(cell.Hook{
		OnStart: func(cell.HookContext) error {
			b, err := NewEtcdBackend(opts)
			if err != nil {
				return err
			}
			c.backend.Store(&b)
			p.Log.Info("Connecting to etcd", "endpoints", opts.Config.Endpoints, "lease-ttl", opts.LeaseTTL)
			if p.Heartbeat.KVStoreHeartbeatWriter {
				stopHeartbeat = StartHeartbeat(b, HeartbeatInterval, p.Log)
			}
			return nil
		},
		OnStop: func(cell.HookContext) error {
			if stopHeartbeat != nil {
				stopHeartbeat()
			}
			if b := c.backend.Load(); b != nil {
				(*b).Close()
			}
			return nil
		},
	})
	return c, nil
}

// etcdOptions turns the flags into backend options.
func etcdOptions(cfg Config) (EtcdOptions, error) {
	var ec *EtcdConfig
	var err error
	if path := cfg.KVStoreOpt[OptEtcdConfig]; path != "" {
		ec, err = ReadEtcdConfig(path)
	} else {
		ec, err = EtcdConfigForAddress(cfg.KVStoreOpt[OptEtcdAddress])
	}
	if err != nil {
		return EtcdOptions{}, fmt.Errorf("--kvstore-opt: %w", err)
	}
	if _, err := ec.TLSConfig(); err != nil {
		return EtcdOptions{}, fmt.Errorf("--kvstore-opt: %w", err)
	}
	qps, _ := cfg.QPS()         // validated by Config.Validate
	limit, _ := cfg.ListLimit() // validated by Config.Validate
	return EtcdOptions{
		Config:              ec,
		LeaseTTL:            cfg.KVStoreLeaseTTL,
		ConnectivityTimeout: cfg.KVStoreConnectivityTimeout,
		QPS:                 qps,
		ListLimit:           limit,
		HeartbeatTimeout:    2 * HeartbeatInterval,
		StatusInterval:      5 * time.Second,
	}, nil
}
