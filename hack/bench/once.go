package bench

import "testing"

// WithTB runs fn once with a testing.TB, for benchmark programs that need
// test helpers (such as kvstoretest's embedded etcd) outside `go test`:
// testing.Benchmark supplies the *testing.B, and fn runs its own fixed
// measurements instead of looping b.N times.
func WithTB[T any](fn func(tb testing.TB) (T, error)) (T, error) {
	var res T
	var err error
	done := false
	testing.Benchmark(func(b *testing.B) {
		if done {
			return
		}
		res, err = fn(b)
		done = true
	})
	return res, err
}
