package bench_test

import (
	"context"
	"slices"
	"testing"

	"github.com/apiary-net/apiary/hack/bench"
	"github.com/apiary-net/apiary/hack/bench/graph"
)

// TestFrameworksRunWholeGraph checks that one run of each framework calls
// every constructor, start hook and stop hook exactly once, so that the
// benchmark compares the same work.
func TestFrameworksRunWholeGraph(t *testing.T) {
	want := graph.Counts{Constructed: graph.N, Started: graph.N, Stopped: graph.N, Invoked: 1}
	if graph.N != 200 {
		t.Fatalf("graph.N = %d, want 200 (the hive benchmark's size)", graph.N)
	}
	var names []string
	for _, fw := range bench.Frameworks {
		names = append(names, fw.Name)
	}
	if want := []string{"apiary", "fx", "cilium-hive"}; !slices.Equal(names, want) {
		t.Fatalf("frameworks %v, want %v (ours first)", names, want)
	}
	for _, fw := range bench.Frameworks {
		t.Run(fw.Name, func(t *testing.T) {
			graph.ResetCounts()
			if err := fw.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := graph.ReadCounts(); got != want {
				t.Errorf("counts after one run = %+v, want %+v", got, want)
			}
		})
	}
}

// BenchmarkHive times populate+start+stop of the graph with apiary's hive.
func BenchmarkHive(b *testing.B) { benchmark(b, bench.RunHive) }

// BenchmarkFx times populate+start+stop of the graph with go.uber.org/fx.
func BenchmarkFx(b *testing.B) { benchmark(b, bench.RunFx) }

// BenchmarkCiliumHive times populate+start+stop of the graph with
// github.com/cilium/hive.
func BenchmarkCiliumHive(b *testing.B) { benchmark(b, bench.RunCiliumHive) }

func benchmark(b *testing.B, run func(context.Context) error) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := run(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
