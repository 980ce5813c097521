package kvstore

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Config is the kvstore configuration, with Cilium's flag names.
type Config struct {
	// KVStore is the backend type: "etcd", or empty to disable.
	KVStore string
	// KVStoreOpt are backend options: etcd.config, etcd.address,
	// etcd.qps, etcd.limit.
	KVStoreOpt map[string]string
	// KVStoreLeaseTTL is the TTL of the session lease.
	KVStoreLeaseTTL time.Duration
	// KVStorePeriodicSync is how often stores compare their local keys
	// with the kvstore and write those that differ.
	KVStorePeriodicSync time.Duration
	// KVStoreConnectivityTimeout bounds one connection attempt.
	KVStoreConnectivityTimeout time.Duration
}

// DefaultConfig has Cilium's defaults.
var DefaultConfig = Config{
	KVStoreLeaseTTL:            15 * time.Minute,
	KVStorePeriodicSync:        5 * time.Minute,
	KVStoreConnectivityTimeout: 2 * time.Minute,
}

// Flags registers the kvstore flags.
func (def Config) Flags(fs *pflag.FlagSet) {
	fs.String("kvstore", def.KVStore, "Key-value store type: etcd, or empty for standalone mode")
	fs.StringToString("kvstore-opt", def.KVStoreOpt,
		"Key-value store options: etcd.config=<file>, etcd.address=<url>, etcd.qps=<writes/s>, etcd.limit=<list page size>")
	fs.Duration("kvstore-lease-ttl", def.KVStoreLeaseTTL, "Time-to-live of the session lease that keys of this agent are bound to")
	fs.Duration("kvstore-periodic-sync", def.KVStorePeriodicSync, "How often the agent compares its own keys with the kvstore and writes those that differ")
	fs.Duration("kvstore-connectivity-timeout", def.KVStoreConnectivityTimeout, "Time allowed for one connection attempt to the kvstore")
}

// Option names accepted in --kvstore-opt.
const (
	OptEtcdConfig  = "etcd.config"
	OptEtcdAddress = "etcd.address"
	OptEtcdQPS     = "etcd.qps"
	OptEtcdLimit   = "etcd.limit"
)

var knownOptions = []string{OptEtcdAddress, OptEtcdConfig, OptEtcdLimit, OptEtcdQPS}

// Validate checks the flags; it does not read the etcd config file (the
// client does, and reports errors naming the file and field).
func (c *Config) Validate() error {
	switch c.KVStore {
	case "":
		return nil
	case "etcd":
	default:
		return fmt.Errorf("--kvstore: unsupported type %q (want etcd or empty)", c.KVStore)
	}
	var errs []error
	for k := range c.KVStoreOpt {
		if !slices.Contains(knownOptions, k) {
			errs = append(errs, fmt.Errorf("--kvstore-opt: unknown option %q (known: %s)", k, strings.Join(knownOptions, ", ")))
		}
	}
	if c.KVStoreOpt[OptEtcdConfig] == "" && c.KVStoreOpt[OptEtcdAddress] == "" {
		errs = append(errs, errors.New("--kvstore-opt: --kvstore=etcd needs etcd.config=<file> or etcd.address=<url>"))
	}
	if _, err := c.QPS(); err != nil {
		errs = append(errs, err)
	}
	if _, err := c.ListLimit(); err != nil {
		errs = append(errs, err)
	}
	if c.KVStoreLeaseTTL < 5*time.Second {
		errs = append(errs, fmt.Errorf("--kvstore-lease-ttl: %s is below the minimum of 5s", c.KVStoreLeaseTTL))
	}
	if c.KVStorePeriodicSync <= 0 {
		errs = append(errs, fmt.Errorf("--kvstore-periodic-sync: must be positive, got %s", c.KVStorePeriodicSync))
	}
	if c.KVStoreConnectivityTimeout <= 0 {
		errs = append(errs, fmt.Errorf("--kvstore-connectivity-timeout: must be positive, got %s", c.KVStoreConnectivityTimeout))
	}
	return errors.Join(errs...)
}

// QPS returns the client-side write rate limit (0: unlimited).
func (c *Config) QPS() (float64, error) {
	s, ok := c.KVStoreOpt[OptEtcdQPS]
	if !ok {
		return 0, nil
	}
	q, err := strconv.ParseFloat(s, 64)
	if err != nil || q < 0 {
		return 0, fmt.Errorf("--kvstore-opt: %s=%q is not a non-negative number", OptEtcdQPS, s)
	}
	return q, nil
}

// ListLimit returns the page size of list requests (default 1000).
func (c *Config) ListLimit() (int64, error) {
	s, ok := c.KVStoreOpt[OptEtcdLimit]
	if !ok {
		return 1000, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("--kvstore-opt: %s=%q is not a positive integer", OptEtcdLimit, s)
	}
	return n, nil
}

// EtcdOptionsFromConfig turns the flags into backend options, reading the
// etcd config file and the TLS files it names; errors name the flag.
func EtcdOptionsFromConfig(cfg Config) (EtcdOptions, error) {
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
