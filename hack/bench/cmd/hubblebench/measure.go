package main

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"golang.org/x/sys/unix"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath/hubble/api/observer"
	"github.com/apiary-net/apiary/datapath/hubble/hubbletest"
)

type result struct {
	sent, read, flows uint64
	elapsed           time.Duration
	agentCPU          time.Duration
}

func (r result) perTenK() time.Duration {
	if r.flows == 0 {
		return 0
	}
	return time.Duration(float64(r.agentCPU) * 10000 / float64(r.flows))
}

type collectors struct {
	cell.In

	Collectors []prometheus.Collector `group:"metrics"`
}

func measure(tb testing.TB, rate int, d time.Duration, capacity int) (result, error) {
	var cs collectors
	a := hubbletest.StartWith(tb, []string{fmt.Sprintf("hubble-event-buffer-capacity=%d", capacity)}, celltest.Capture(&cs))
	s := a.NewScene(tb)
	frame := s.DeniedTCP().MustFrame()
	reg := prometheus.NewRegistry()
	for _, c := range cs.Collectors {
		if err := reg.Register(c); err != nil {
			return result{}, err
		}
	}
	obs := observer.NewObserverClient(a.Dial(tb))

	startCPU := processCPU()
	start := time.Now()
	sent, genCPU, err := generate(s.Programs.ToContainer, frame, rate, d)
	if err != nil {
		return result{}, err
	}
	elapsed := time.Since(start)
	// Wait until the reader and the observer have taken what they will.
	var read, flows uint64
	for last := uint64(1<<63 - 1); ; last = read + flows {
		time.Sleep(200 * time.Millisecond)
		if read, err = monitorDrops(reg); err != nil {
			return result{}, err
		}
		st, err := obs.ServerStatus(context.Background(), &observer.ServerStatusRequest{})
		if err != nil {
			return result{}, err
		}
		flows = st.GetSeenFlows()
		if read+flows == last {
			break
		}
	}
	return result{sent: sent, read: read, flows: flows, elapsed: elapsed, agentCPU: processCPU() - startCPU - genCPU}, nil
}

// generate runs prog on frame in batches every 10 ms, paced to rate
// runs (each writes one drop event) per second, on one locked thread
// whose CPU time it returns.
func generate(prog *ebpf.Program, frame []byte, rate int, d time.Duration) (sent uint64, cpu time.Duration, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before := threadCPU()
	const tick = 10 * time.Millisecond
	start := time.Now()
	for next := start; time.Since(start) < d; next = next.Add(tick) {
		due := uint64(time.Since(start).Seconds()*float64(rate)) + uint64(rate/100)
		if due > sent {
			n := due - sent
			if _, err := prog.Run(&ebpf.RunOptions{Data: frame, Repeat: uint32(n)}); err != nil {
				return sent, 0, fmt.Errorf("BPF_PROG_TEST_RUN: %w", err)
			}
			sent += n
		}
		time.Sleep(time.Until(next.Add(tick)))
	}
	return sent, threadCPU() - before, nil
}

func monitorDrops(g prometheus.Gatherer) (uint64, error) {
	mfs, err := g.Gather()
	if err != nil {
		return 0, err
	}
	for _, mf := range mfs {
		if mf.GetName() != "apiary_monitor_events_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if labelIs(m, "type", "drop") {
				return uint64(m.GetCounter().GetValue()), nil
			}
		}
	}
	return 0, fmt.Errorf("no apiary_monitor_events_total{type=\"drop\"}")
}

func labelIs(m *dto.Metric, name, value string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}

func rusage(who int) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func processCPU() time.Duration { return rusage(unix.RUSAGE_SELF) }
func threadCPU() time.Duration  { return rusage(unix.RUSAGE_THREAD) }
