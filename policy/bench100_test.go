package policy_test

import (
	"runtime"
	"testing"

	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
)

// benchEndpointsMax is the number of endpoints of the 100-endpoint
// benchmarks: one per app value.
const benchEndpointsMax = benchApps

// endpointIdentities returns one identity per app value: the subjects
// of the 100-endpoint benchmarks.
func endpointIdentities() []*identity.Identity {
	out := make([]*identity.Identity, benchEndpointsMax)
	for app := range out {
		out[app] = benchIdentity(app)
	}
	return out
}

// BenchmarkColdMapState100 resolves and distills the map states of 100
// endpoints, one per app value, at a new revision.
func BenchmarkColdMapState100(b *testing.B) {
	e := benchEngine(b)
	idents := endpointIdentities()
	for b.Loop() {
		e.repo.Add()
		for _, id := range idents {
			e.endpoint(id).Detach()
		}
	}
}

// BenchmarkAddSelectedIdentity100 adds or deletes one identity that the
// policies of several of the 100 endpoints select, and takes every
// endpoint's map-state delta.
func BenchmarkAddSelectedIdentity100(b *testing.B) {
	e := benchEngine(b)
	eps := make([]*policy.EndpointPolicy, 0, benchEndpointsMax)
	for _, id := range endpointIdentities() {
		ep := e.endpoint(id)
		ep.ConsumeMapChanges()
		eps = append(eps, ep)
	}
	pool := make([][]identity.Change, 1000)
	for i := range pool {
		pool[i] = added(benchIdentity(benchIdentities + 1 + i*benchApps))
	}
	k := 0
	for b.Loop() {
		ch := pool[k%len(pool)]
		ch[0].Kind = identity.Added
		if k/len(pool)%2 == 1 {
			ch[0].Kind = identity.Deleted
		}
		e.cache.OnIdentitiesChanged(ch)
		changed := 0
		for _, ep := range eps {
			changed += ep.ConsumeMapChanges().Len()
		}
		if changed == 0 {
			b.Fatal("no endpoint's map state changed")
		}
		k++
	}
}

// BenchmarkHeap measures the live heap after resolving 1 and 100
// endpoints on the workload (identities, policies, selector cache and
// map states all held); its time per op is building all of that.
func BenchmarkHeap(b *testing.B) {
	for _, tc := range []struct {
		name      string
		endpoints int
	}{
		{"1-endpoint", 1},
		{"100-endpoints", benchEndpointsMax},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var mib float64
			for b.Loop() {
				mib = liveHeapMiB(b, tc.endpoints)
			}
			b.ReportMetric(mib, "MiB")
		})
	}
}

func liveHeapMiB(b *testing.B, endpoints int) float64 {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	e := benchEngine(b)
	eps := make([]*policy.EndpointPolicy, 0, endpoints)
	for _, id := range endpointIdentities()[:endpoints] {
		eps = append(eps, e.endpoint(id))
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(e)
	runtime.KeepAlive(eps)
	return float64(after.HeapAlloc-before.HeapAlloc) / (1 << 20)
}
