package monitorcell

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/apiary-net/apiary/datapath/maps/configmap"
)

// Config is the monitor's configuration.
type Config struct {
	// MonitorAggregation is how many trace events of forwarded packets
	// the programs write while an observer listens, in Cilium's levels:
	// none and low trace every packet, medium and maximum the packets
	// that open, close or reset a flow (bpf/lib/trace.h).
	MonitorAggregation string
}

// DefaultConfig aggregates as Cilium's default (medium).
var DefaultConfig = Config{MonitorAggregation: "medium"}

// Flags registers --monitor-aggregation.
func (def Config) Flags(fs *pflag.FlagSet) {
	fs.String("monitor-aggregation", def.MonitorAggregation,
		"Level of trace-event aggregation for forwarded packets: none or low (every packet), medium or maximum (new flows and TCP SYN/FIN/RST only)")
}

// aggregationLevels maps Cilium's spellings to whether every forwarded
// packet is traced.
var aggregationLevels = map[string]bool{
	"none": true, "disabled": true, "lowest": true, "low": true,
	"medium": false, "max": false, "maximum": false,
}

// Validate checks the level.
func (c *Config) Validate() error {
	if _, ok := aggregationLevels[strings.ToLower(c.MonitorAggregation)]; !ok {
		return fmt.Errorf("--monitor-aggregation: %q is not none, low, medium or maximum", c.MonitorAggregation)
	}
	return nil
}

// traceFlags are the config-map flags that turn traces on at this level.
func (c Config) traceFlags() uint32 {
	if aggregationLevels[strings.ToLower(c.MonitorAggregation)] {
		return configmap.FlagTraceEvents | configmap.FlagTraceAll
	}
	return configmap.FlagTraceEvents
}
