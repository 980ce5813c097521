package cmbench

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/apiary-net/apiary/hack/bench"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
)

// Results are one cmbench run.
type Results struct {
	Size         Size
	Runs         int
	Fill         time.Duration
	Apiary, Peer time.Duration // medians
	ApiaryAll    []time.Duration
	ApiaryReady  time.Duration // median of the part until the remote was ready
	ReadyAll     []time.Duration
	// ApiaryCPU and PeerCPU are the medians of the process's CPU time
	// (user+system, the embedded etcd's included) during each timed
	// read: less sensitive than wall time to other load on the machine.
	ApiaryCPU, PeerCPU time.Duration
	apiaryCPUs         []time.Duration
	peerCPUs           []time.Duration
	PeerAll            []time.Duration
	Steady             Latency
	Rate               int
	SteadyFor          time.Duration
}

// Measure starts a real etcd (embedded, in tb's temporary directory),
// fills it with s, and measures runs alternating rounds of ApiaryRead
// and PeerRead (medians), then the steady state at rate puts/s for d.
func Measure(tb testing.TB, s Size, runs, rate int, d time.Duration) (Results, error) {
	srv := kvstoretest.StartServer(tb)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	r := Results{Size: s, Runs: runs, Rate: rate, SteadyFor: d}
	begin := time.Now()
	if err := Fill(ctx, srv.Client(), s); err != nil {
		return r, err
	}
	r.Fill = time.Since(begin)
	for i := range runs {
		// Alternate which side goes first, so neither always gets the
		// warmer etcd.
		sides := []func() error{
			func() error {
				d, ready, cpu, err := ApiaryRead(ctx, srv.EtcdConfig(), s)
				r.ApiaryAll, r.ReadyAll, r.apiaryCPUs = append(r.ApiaryAll, d), append(r.ReadyAll, ready), append(r.apiaryCPUs, cpu)
				return err
			},
			func() error {
				cpu0 := bench.ProcessCPU()
				d, err := PeerRead(ctx, srv.Client(), s)
				r.PeerAll, r.peerCPUs = append(r.PeerAll, d), append(r.peerCPUs, bench.ProcessCPU()-cpu0)
				return err
			},
		}
		if i%2 == 1 {
			slices.Reverse(sides)
		}
		for _, side := range sides {
			if err := side(); err != nil {
				return r, fmt.Errorf("round %d: %w", i+1, err)
			}
		}
	}
	r.Apiary, r.Peer, r.ApiaryReady = bench.Median(r.ApiaryAll), bench.Median(r.PeerAll), bench.Median(r.ReadyAll)
	r.ApiaryCPU, r.PeerCPU = bench.Median(r.apiaryCPUs), bench.Median(r.peerCPUs)
	var err error
	r.Steady, err = SteadyState(ctx, srv.EtcdConfig(), srv.Client(), s, rate, d)
	return r, err
}
