package monitorcell

import (
	"testing"

	"github.com/apiary-net/apiary/datapath/maps/configmap"
)

func TestMonitorAggregation(t *testing.T) {
	for _, tc := range []struct {
		give string
		want uint32
	}{
		{"none", configmap.FlagTraceEvents | configmap.FlagTraceAll},
		{"low", configmap.FlagTraceEvents | configmap.FlagTraceAll},
		{"medium", configmap.FlagTraceEvents},
		{"Maximum", configmap.FlagTraceEvents},
	} {
		c := Config{MonitorAggregation: tc.give}
		if err := c.Validate(); err != nil {
			t.Errorf("%s: %v", tc.give, err)
		}
		if got := c.traceFlags(); got != tc.want {
			t.Errorf("%s: flags %#x, want %#x", tc.give, got, tc.want)
		}
	}
	if err := (&Config{MonitorAggregation: "high"}).Validate(); err == nil {
		t.Error("--monitor-aggregation=high accepted")
	}
}
