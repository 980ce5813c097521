package monitor

import (
	"errors"
	"log/slog"
	"time"

	"github.com/apiary-net/apiary/datapath/maps/eventsmap"
)

// Source is where events come from: an *events.Reader. Read blocks until
// an event arrives and returns events.ErrClosed once the source is
// closed.
type Source interface {
	Read() (eventsmap.Event, error)
}

var _ Source = (*eventsmap.Reader)(nil)

// Run reads src until it is closed and publishes each event with the
// labels of its identities looked up in ids (which may be nil). A record
// that does not decode is logged and skipped. now gives the event times
// (time.Now when nil).
func (m *Monitor) Run(log *slog.Logger, src Source, ids Identities, now func() time.Time) {
	if now == nil {
		now = time.Now
	}
	for {
		ev, err := src.Read()
		switch {
		case errors.Is(err, eventsmap.ErrClosed):
			return
		case err != nil:
			log.Warn("Skipping a datapath event that does not decode", "error", err)
			continue
		}
		m.Publish(enrich(ids, ev, now()))
	}
}
