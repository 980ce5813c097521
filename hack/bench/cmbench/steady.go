package cmbench

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiary-net/apiary/hack/bench/benchagent"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/policy/ipcache"
)

// Latency is the put -> listener latency distribution of the steady
// state.
type Latency struct {
	Puts     int
	P50, P99 time.Duration
	Max      time.Duration
}

// pending maps a prefix to the time its put was sent.
type pending struct {
	mu   sync.Mutex
	sent map[netip.Prefix]time.Time
	took []time.Duration
}

func (p *pending) OnIPCacheChanged(_ ipcache.Revision, changes []ipcache.Change) {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ch := range changes {
		if t, ok := p.sent[ch.Prefix]; ok && ch.New != nil {
			p.took = append(p.took, now.Sub(t))
			delete(p.sent, ch.Prefix)
		}
	}
}

// SteadyState connects a fresh agent to the filled remote, waits until
// it is ready, then has a writer put changed ipcache entries (a new host
// each) on the remote at rate puts/s for d, and measures each put's
// latency until the local ipcache listener is told.
func SteadyState(ctx context.Context, cfg *kvstore.EtcdConfig, c *clientv3.Client, s Size, rate int, d time.Duration) (Latency, error) {
	p := &pending{sent: map[netip.Prefix]time.Time{}}
	a, err := benchagent.Start(ctx, p.OnIPCacheChanged)
	if err != nil {
		return Latency{}, err
	}
	defer a.Stop()
	if err := a.Connect(RemoteName, cfg).WaitSynced(ctx); err != nil {
		return Latency{}, fmt.Errorf("wait for %s synced: %w", RemoteName, err)
	}
	puts := int(d.Seconds() * float64(rate))
	if puts > s.Endpoints {
		puts = s.Endpoints
	}
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	for i := range puts {
		<-tick.C
		k, v, err := endpointKV(s, i, 1)
		if err != nil {
			return Latency{}, err
		}
		p.mu.Lock()
		p.sent[endpointPrefix(i)] = time.Now()
		p.mu.Unlock()
		if _, err := c.Put(ctx, k, string(v)); err != nil {
			return Latency{}, fmt.Errorf("put %s: %w", k, err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		p.mu.Lock()
		left, took := len(p.sent), slices.Clone(p.took)
		p.mu.Unlock()
		if left == 0 {
			slices.Sort(took)
			return Latency{Puts: puts, P50: took[len(took)/2], P99: took[len(took)*99/100], Max: took[len(took)-1]}, nil
		}
		if time.Now().After(deadline) {
			return Latency{}, fmt.Errorf("%d of %d puts never reached the ipcache listener", left, puts)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
