package kvstore

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"golang.org/x/time/rate"
)

// EtcdOptions configure an etcd backend.
type EtcdOptions struct {
	// Config holds the endpoints and TLS files.
	Config *EtcdConfig
	// LeaseTTL is the TTL of the session lease (default 15m).
	LeaseTTL time.Duration
	// LockLeaseTTL is the TTL of the lease locks are held on (default 25s).
	LockLeaseTTL time.Duration
	// ConnectivityTimeout bounds one status probe (default 2m).
	ConnectivityTimeout time.Duration
	// QPS limits writes per second (0: unlimited).
	QPS float64
	// ListLimit is the page size of list requests (default 1000).
	ListLimit int64
	// StatusInterval is the time between status probes (default 5s).
	StatusInterval time.Duration
	// HeartbeatTimeout: the status fails when the heartbeat key is older
	// (default 2m; negative disables the check).
	HeartbeatTimeout time.Duration
	// Logger receives the client's logs.
	Logger *slog.Logger
	// Metrics, if set, records operations and events.
	Metrics *Metrics
	// OnStatusChange, if set, is called (without locks held) when a
	// status check changes the state (connecting, ok, failure), so that
	// the status line shows it at once.
	OnStatusChange func()
}

func (o *EtcdOptions) setDefaults() {
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = DefaultConfig.KVStoreLeaseTTL
	}
	if o.LockLeaseTTL <= 0 {
		o.LockLeaseTTL = 25 * time.Second
	}
	if o.ConnectivityTimeout <= 0 {
		o.ConnectivityTimeout = DefaultConfig.KVStoreConnectivityTimeout
	}
	if o.ListLimit <= 0 {
		o.ListLimit = 1000
	}
	if o.StatusInterval <= 0 {
		o.StatusInterval = 5 * time.Second
	}
	if o.HeartbeatTimeout == 0 {
		o.HeartbeatTimeout = 2 * time.Minute
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics()
	}
}

// etcdBackend implements Backend on an etcd v3 client.
type etcdBackend struct {
	opts    EtcdOptions
	log     *slog.Logger
	client  *clientv3.Client
	limiter *rate.Limiter
	leases  *leaseManager
	locks   *lockSessions
	metrics *Metrics

	observersMu sync.Mutex
	observers   []leaseObserver

	status   *statusChecker
	hist     *history
	verifier historyVerifier

	// ctx ends at Close; every operation's context ends with it.
	ctx       context.Context
	cancel    context.CancelFunc
	closeOnce sync.Once
	spawnMu   sync.Mutex
	closed    bool
	wg        sync.WaitGroup // goroutines started with spawn
}

var _ Backend = (*etcdBackend)(nil)

type leaseObserver struct {
	prefix string
	fn     func(key string)
}

// NewEtcdBackend creates an etcd client. It does not wait for the
// connection: operations wait (bounded by their contexts) and Status says
// how connecting goes. Close releases it.
func NewEtcdBackend(opts EtcdOptions) (Backend, error) {
	opts.setDefaults()
	if opts.Config == nil {
		return nil, fmt.Errorf("create etcd client: no configuration")
	}
	tlsCfg, err := opts.Config.TLSConfig()
	if err != nil {
		return nil, err
	}
	client, err := clientv3.New(clientv3.Config{
		Endpoints:            opts.Config.Endpoints,
		TLS:                  tlsCfg,
		DialKeepAliveTime:    15 * time.Second,
		DialKeepAliveTimeout: 5 * time.Second,
		PermitWithoutStream:  true,
		Logger:               zap.NewNop(),
	})
	if err != nil {
		return nil, fmt.Errorf("create etcd client for %s: %w", strings.Join(opts.Config.Endpoints, ","), err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &etcdBackend{
		opts:    opts,
		log:     opts.Logger,
		client:  client,
		metrics: opts.Metrics,
		ctx:     ctx,
		cancel:  cancel,
	}
	if opts.QPS > 0 {
		e.limiter = rate.NewLimiter(rate.Limit(opts.QPS), max(1, int(opts.QPS)))
	}
	e.leases = newLeaseManager(ctx, client, opts.LeaseTTL, e.log, e.notifyLeaseExpired, e.spawn, e.begin)
	e.locks = newLockSessions(ctx, client, opts.LockLeaseTTL)
	e.hist = newHistory(e.log, e.metrics, e.historyLost)
	e.status = newStatusChecker(e, tlsCfg)
	e.spawn(func() { e.status.run(ctx) })
	return e, nil
}

// historyLost runs when etcd went back in time: leases and the lock
// session of the old history cannot be trusted. Watchers notice on their
// own (the epoch's channel closes).
func (e *etcdBackend) historyLost(string) {
	e.spawn(func() {
		e.locks.reset()
		e.leases.reset()
	})
}

// Close ends every operation in flight and every goroutine, and returns
// within a few seconds whatever state etcd is in. It revokes the lock
// lease (so locks are released at once) but not the session leases: keys
// bound to them expire with their TTL, so a restarting agent finds them
// still there.
func (e *etcdBackend) Close() {
	e.closeOnce.Do(func() {
		e.spawnMu.Lock()
		e.closed = true
		e.spawnMu.Unlock()
		e.cancel()
		e.locks.close()
		// Closing the client ends what waits on it without a context of
		// ours (etcd's mutex cleans up with the client's own context).
		_ = e.client.Close()
		e.wg.Wait()
	})
}

func (e *etcdBackend) OnLeaseExpired(prefix string, fn func(key string)) {
	e.observersMu.Lock()
	defer e.observersMu.Unlock()
	e.observers = append(e.observers, leaseObserver{prefix: prefix, fn: fn})
}

func (e *etcdBackend) notifyLeaseExpired(keys []string) {
	e.observersMu.Lock()
	obs := append([]leaseObserver(nil), e.observers...)
	e.observersMu.Unlock()
	for _, k := range keys {
		for _, o := range obs {
			if strings.HasPrefix(k, o.prefix) {
				o.fn(k)
			}
		}
	}
}

func (e *etcdBackend) Status() Status { return e.status.get() }

// waitWrite applies the client-side write rate limit.
func (e *etcdBackend) waitWrite(ctx context.Context) error {
	if e.limiter == nil {
		return nil
	}
	return e.limiter.Wait(ctx)
}
