package hubblecell

import (
	"time"

	"github.com/apiary-net/apiary/datapath/hubble"
	"github.com/apiary-net/apiary/datapath/hubble/api/flow"
	"github.com/apiary-net/apiary/datapath/maps/metricsmap"
)

// kernelLostInterval is how often the programs' count of event records
// the ring buffer had no room for is read.
const kernelLostInterval = time.Second

// watchKernelLost reports, every kernelLostInterval until stopped, the
// event records lost since the last look as a LostEvent of source
// PERF_EVENT_RING_BUFFER (Hubble's name for the datapath's buffer);
// losses from before the start are not reported.
func (s *server) watchKernelLost(m *metricsmap.Map) {
	prev, err := m.EventsLost()
	if err != nil {
		s.log.Warn("Cannot read the datapath's lost-events counter", "error", err)
	}
	tick := time.NewTicker(kernelLostInterval)
	defer tick.Stop()
	for {
		select {
		case <-s.stopped:
			return
		case <-tick.C:
		}
		n, err := m.EventsLost()
		if err != nil {
			s.log.Warn("Cannot read the datapath's lost-events counter", "error", err)
			continue
		}
		if n > prev {
			s.mu.Lock()
			s.kernelLost += n - prev
			s.mu.Unlock()
			s.ring.Write(hubble.Entry{Lost: n - prev, LostSource: flow.LostEventSource_PERF_EVENT_RING_BUFFER})
		}
		prev = n
	}
}
