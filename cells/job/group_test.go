package job_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/job"
)

func TestGroupStop(t *testing.T) {
	errStopTimeout := errors.New("stop timeout exceeded")
	tests := []struct {
		name string
		give func() (context.Context, context.CancelFunc)
		want error
	}{
		{
			name: "deadline",
			give: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 10*time.Second)
			},
			want: context.DeadlineExceeded,
		},
		{
			name: "deadline with a cause",
			give: func() (context.Context, context.CancelFunc) {
				return context.WithTimeoutCause(context.Background(), 10*time.Second, errStopTimeout)
			},
			want: errStopTimeout,
		},
	}
	for _, tt := range tests {
		celltest.InBubble(t, "a job ignoring cancellation fails stop at the "+tt.name, func(t *testing.T) {
			f := newFixture(t, "agent", "routes")
			release := make(chan struct{})
			f.group.Add(job.OneShot("stuck", func(context.Context, cell.Health) error {
				<-release
				return nil
			}))
			f.Start()
			defer close(release)
			ctx, cancel := tt.give()
			defer cancel()
			begin := time.Now()
			err := f.StopErr(ctx)
			if d := time.Since(begin); d != 10*time.Second {
				t.Errorf("stop returned after %s, want 10s", d)
			}
			if err == nil || !strings.Contains(err.Error(), `module "agent.routes"`) || !errors.Is(err, tt.want) {
				t.Errorf("stop = %v, want an error naming the module, wrapping %v", err, tt.want)
			}
		})
	}
	celltest.InBubble(t, "stops the jobs one by one in reverse order", func(t *testing.T) {
		f := newFixture(t)
		exits := celltest.NewClock()
		for i := range 3 {
			f.group.Add(job.OneShot("watch", func(ctx context.Context, _ cell.Health) error {
				<-ctx.Done()
				time.Sleep(time.Duration(i+1) * time.Second)
				exits.Record()
				return nil
			}))
		}
		f.Start()
		f.Stop()
		// Each job is a hook: the last added (3s to exit) stops first.
		celltest.WantTimes(t, "exits", exits.Times(), celltest.Secs(3, 5, 6))
	})
}
