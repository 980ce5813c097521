package main

import (
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/hack/bench"
)

// TestReportRatios checks that the ratios compare our median with each
// peer's and with the faster peer's, whichever column it is in.
func TestReportRatios(t *testing.T) {
	fws := []bench.Framework{{Name: "apiary"}, {Name: "fx"}, {Name: "cilium-hive"}}
	tests := []struct {
		name string
		give [][]time.Duration
		want []string
	}{
		{
			name: "second peer faster",
			give: [][]time.Duration{{2 * time.Millisecond}, {8 * time.Millisecond}, {4 * time.Millisecond}},
			want: []string{
				"ratio apiary/fx: 0.25\n",
				"ratio apiary/cilium-hive: 0.50\n",
				"ratio apiary/min(peers): 0.50 (goal <= 0.5)\n",
			},
		},
		{
			name: "first peer faster",
			give: [][]time.Duration{{3 * time.Millisecond}, {2 * time.Millisecond}, {6 * time.Millisecond}},
			want: []string{
				"ratio apiary/fx: 1.50\n",
				"ratio apiary/cilium-hive: 0.50\n",
				"ratio apiary/min(peers): 1.50 (goal <= 0.5)\n",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			if err := report(&out, 1, 0, fws, tt.give); err != nil {
				t.Fatal(err)
			}
			for _, line := range tt.want {
				if !strings.Contains(out.String(), line) {
					t.Errorf("report lacks %q:\n%s", line, out.String())
				}
			}
		})
	}
}
