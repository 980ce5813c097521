package job_test

import (
	"slices"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/job"
)

// TestBackoffDuration checks the schedule without jitter.
func TestBackoffDuration(t *testing.T) {
	type give struct {
		backoff  job.Backoff
		failures int
	}
	tests := []struct {
		name string
		give give
		want time.Duration
	}{
		{name: "zero value waits 1s after the first failure", give: give{job.Backoff{}, 1}, want: time.Second},
		{name: "zero value doubles", give: give{job.Backoff{}, 3}, want: 4 * time.Second},
		{name: "zero value caps at 1m", give: give{job.Backoff{}, 7}, want: time.Minute},
		{name: "default backoff matches the zero value", give: give{job.DefaultBackoff, 6}, want: 32 * time.Second},
		{name: "min is the first wait", give: give{job.Backoff{Min: 250 * time.Millisecond, Max: time.Hour, Factor: 3}, 1}, want: 250 * time.Millisecond},
		{name: "factor multiplies each failure", give: give{job.Backoff{Min: 250 * time.Millisecond, Max: time.Hour, Factor: 3}, 3}, want: 2250 * time.Millisecond},
		{name: "max caps the wait", give: give{job.Backoff{Min: time.Second, Max: 5 * time.Second, Factor: 2}, 4}, want: 5 * time.Second},
		{name: "just under the cap", give: give{job.Backoff{Min: time.Second, Max: 5 * time.Second, Factor: 2}, 3}, want: 4 * time.Second},
		{name: "factor 1 is constant", give: give{job.Backoff{Min: 3 * time.Second, Max: time.Minute, Factor: 1}, 10}, want: 3 * time.Second},
		{name: "factor below 1 uses the default", give: give{job.Backoff{Min: time.Second, Max: time.Minute, Factor: 0.5}, 3}, want: 4 * time.Second},
		{name: "negative min uses the default", give: give{job.Backoff{Min: -time.Second, Max: time.Minute, Factor: 2}, 2}, want: 2 * time.Second},
		{name: "zero failures count as one", give: give{job.Backoff{Min: 2 * time.Second}, 0}, want: 2 * time.Second},
		{name: "negative failures count as one", give: give{job.Backoff{Min: 2 * time.Second}, -5}, want: 2 * time.Second},
		{name: "min above max is capped", give: give{job.Backoff{Min: time.Hour, Max: time.Minute}, 1}, want: time.Minute},
		{name: "min above the default max is the first wait", give: give{job.Backoff{Min: 5 * time.Minute}, 1}, want: 5 * time.Minute},
		{name: "min above the default max caps the wait", give: give{job.Backoff{Min: 5 * time.Minute}, 3}, want: 5 * time.Minute},
		{name: "huge failure counts do not overflow", give: give{job.Backoff{Min: time.Second, Max: time.Hour, Factor: 10}, 100000}, want: time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.give.backoff
			b.Jitter = job.NoJitter
			if got := b.Duration(tt.give.failures); got != tt.want {
				t.Errorf("%+v.Duration(%d) = %s, want %s", b, tt.give.failures, got, tt.want)
			}
		})
	}
}

// TestBackoffJitter checks that two agents with the same backoff do not
// retry in lockstep, and that jitter only stretches the schedule: each
// wait is between the unjittered wait d and d*(1+Jitter).
func TestBackoffJitter(t *testing.T) {
	tests := []struct {
		name    string
		give    job.Backoff
		spread  float64
		wantMax time.Duration // the longest unjittered wait
	}{
		{name: "default jitter", give: job.Backoff{Min: 100 * time.Millisecond, Max: 10 * time.Second, Factor: 2}, spread: job.DefaultJitter, wantMax: 10 * time.Second},
		{name: "zero value", give: job.Backoff{}, spread: job.DefaultJitter, wantMax: time.Minute},
		{name: "own jitter", give: job.Backoff{Min: time.Second, Max: 30 * time.Second, Jitter: 0.1}, spread: 0.1, wantMax: 30 * time.Second},
		{name: "constant waits", give: job.Backoff{Min: time.Second, Max: time.Second, Factor: 1}, spread: job.DefaultJitter, wantMax: time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exact := tt.give
			exact.Jitter = job.NoJitter
			var a, b []time.Duration
			for failures := 1; failures <= 20; failures++ {
				d := exact.Duration(failures)
				if d > tt.wantMax {
					t.Fatalf("unjittered wait %d is %s, above the cap %s", failures, d, tt.wantMax)
				}
				hi := time.Duration(float64(d) * (1 + tt.spread))
				for _, got := range []time.Duration{tt.give.Duration(failures), tt.give.Duration(failures)} {
					if got < d || got > hi {
						t.Errorf("wait after %d failures = %s, want within [%s, %s]", failures, got, d, hi)
					}
				}
				a, b = append(a, tt.give.Duration(failures)), append(b, tt.give.Duration(failures))
			}
			if slices.Equal(a, b) {
				t.Errorf("two runs waited the same %v: want jitter to set them apart", a)
			}
		})
	}
}
