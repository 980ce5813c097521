package main

import (
	"fmt"
	"runtime"
	"testing"
)

// side is one engine's implementation of the steps.
type side interface {
	addIdentities(b *testing.B)
	parsePolicies(b *testing.B)
	insertPolicies(b *testing.B)
	cold(b *testing.B)
	warmResolve(b *testing.B)
	warmDistill(b *testing.B)
	addIdentity(b *testing.B, selected bool, endpoints int)
	endpoints(b *testing.B)
	// setup builds everything from the workload's data with endpoints
	// endpoints resolved and distilled, and returns what holds it.
	setup(endpoints int) (any, error)
}

// step is one row of the table: a time per operation.
type step struct {
	name string
	run  func(s side, b *testing.B)
}

var steps = []step{
	{"identities added (10,000, one update each)", side.addIdentities},
	{"CNPs parsed (1,000, from YAML)", side.parsePolicies},
	{"CNPs inserted (1,000, one object each)", side.insertPolicies},
	{"cold resolve+distill (1 endpoint)", side.cold},
	{"warm resolve (new revision, selectors held)", side.warmResolve},
	{"warm distill (resolved policy)", side.warmDistill},
	{"one selected identity added/deleted", func(s side, b *testing.B) { s.addIdentity(b, true, 1) }},
	{"one unselected identity added/deleted", func(s side, b *testing.B) { s.addIdentity(b, false, 1) }},
	{"100 endpoints resolve+distill (new revision)", side.endpoints},
	{"one selected identity, 100 endpoints", func(s side, b *testing.B) { s.addIdentity(b, true, 100) }},
}

// heapRows are the endpoint counts of the live-heap rows.
var heapRows = []int{1, 100}

// results holds every round's figure per row and side: ns per operation
// for steps, bytes for heap rows.
type results struct {
	steps [][2][]float64
	heap  [][2][]float64
}

// measure runs rounds rounds; in each, every step runs once per side
// (testing.Benchmark), the side going first alternating by round and
// step, then every heap row is measured for both sides.
func measure(sides [2]side, rounds int) (*results, error) {
	r := &results{steps: make([][2][]float64, len(steps)), heap: make([][2][]float64, len(heapRows))}
	for round := range rounds {
		for i, st := range steps {
			for j := range 2 {
				k := (round + i + j) % 2
				res := testing.Benchmark(func(b *testing.B) { st.run(sides[k], b) })
				if res.N == 0 {
					return nil, fmt.Errorf("%s: %s failed: %s", st.name, sideNames[k], failure)
				}
				r.steps[i][k] = append(r.steps[i][k], float64(res.T.Nanoseconds())/float64(res.N))
			}
		}
		for i, n := range heapRows {
			for j := range 2 {
				k := (round + i + j) % 2
				bytes, err := liveHeap(sides[k], n)
				if err != nil {
					return nil, fmt.Errorf("live heap, %s: %w", sideNames[k], err)
				}
				r.heap[i][k] = append(r.heap[i][k], bytes)
			}
		}
	}
	return r, nil
}

// liveHeap returns how much the live heap grows by building the state
// with endpoints endpoints from the workload's data.
func liveHeap(s side, endpoints int) (float64, error) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	held, err := s.setup(endpoints)
	if err != nil {
		return 0, err
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(held)
	return float64(after.HeapAlloc) - float64(before.HeapAlloc), nil
}

// failure is the message of the last failed step: testing.Benchmark
// keeps a failure's message to itself.
var failure string

// failf records the failure and stops the step.
func failf(b *testing.B, format string, args ...any) {
	failure = fmt.Sprintf(format, args...)
	b.FailNow()
}

// stillAdded returns the entries of pool that are added after k
// operations that add the whole pool, then delete it, and so on.
func stillAdded[T any](pool []T, k int) []T {
	i := k % len(pool)
	if k/len(pool)%2 == 0 {
		return pool[:i]
	}
	return pool[i:]
}
