package kvstore

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/apiary-net/apiary/kvstore/layout"
)

// HeartbeatInterval is how often the heartbeat writer updates
// layout.HeartbeatKey; the status fails when it is older than twice that.
const HeartbeatInterval = time.Minute

// StartHeartbeat writes the current time (RFC 3339) to layout.HeartbeatKey,
// bound to the session lease, every interval until the returned stop
// function is called, and at once when the lease it was written with is
// lost (expired, or etcd went back in time). One writer per cluster is
// enough (Cilium's operator is that writer); every agent checks the key's
// age.
func StartHeartbeat(b Backend, interval time.Duration, log *slog.Logger) (stop func()) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	lost := make(chan struct{}, 1)
	b.OnLeaseExpired(layout.HeartbeatKey, func(string) {
		select {
		case lost <- struct{}{}:
		default:
		}
	})
	var wg sync.WaitGroup
	wg.Go(func() {
		timer := time.NewTimer(0)
		defer timer.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			case <-lost:
				timer.Stop()
			}
			wctx, wcancel := context.WithTimeout(ctx, 25*time.Second)
			err := b.Update(wctx, layout.HeartbeatKey, []byte(time.Now().Format(time.RFC3339)), true)
			wcancel()
			if err != nil && ctx.Err() == nil {
				log.Warn("Unable to update the heartbeat key", "key", layout.HeartbeatKey, "error", err)
			}
			timer.Reset(interval)
		}
	})
	return func() {
		cancel()
		wg.Wait()
	}
}
