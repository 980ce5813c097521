package metricsmap_test

import (
	"encoding/binary"
	"testing"

	"github.com/apiary-net/apiary/bpf"
	"github.com/apiary-net/apiary/datapath/maps/metricsmap"
)

// The counting itself is tested through the programs in datapath/loader.
func TestLayoutMatchesPrograms(t *testing.T) {
	if a, b := binary.Size(metricsmap.Value{}), binary.Size(bpf.LxcMetricsValue{}); a != b {
		t.Errorf("Value is %d bytes, struct metrics_value %d", a, b)
	}
}
