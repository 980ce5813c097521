package bench

import (
	"testing"
	"time"
)

// TestMedian: the middle one of an odd count, the mean of the two middle
// ones of an even count, 0 of none; the input is left as it was.
func TestMedian(t *testing.T) {
	odd := []time.Duration{5, 1, 3}
	if got := Median(odd); got != 3 {
		t.Errorf("Median(5, 1, 3) = %v, want 3", got)
	}
	if odd[0] != 5 {
		t.Errorf("Median sorted its input: %v", odd)
	}
	if got := Median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("Median(4, 1, 3, 2) = %v, want 2.5", got)
	}
	if got := Median[int64](nil); got != 0 {
		t.Errorf("Median() = %v, want 0", got)
	}
}
