package safefile

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// A read that never returns (a hung NFS or FUSE mount) is abandoned
// after the timeout.
func TestReadTimeout(t *testing.T) {
	defer func() { readFn = readRegular }()
	synctest.Test(t, func(t *testing.T) {
		// Made in the bubble, so that waiting on it is durably blocked.
		release := make(chan struct{})
		readFn = func(string, int64) ([]byte, error) {
			<-release
			return nil, errors.New("released")
		}
		start := time.Now()
		_, err := Read(context.Background(), "/mnt/hung/policy.yaml", Limits{Timeout: 3 * time.Second})
		if !errors.Is(err, os.ErrDeadlineExceeded) || !strings.Contains(err.Error(), "read /mnt/hung/policy.yaml: not read within 3s") {
			t.Errorf("Read = %v, want a timeout naming the file", err)
		}
		if waited := time.Since(start); waited != 3*time.Second {
			t.Errorf("Read returned after %s, want 3s", waited)
		}
		close(release)
	})
}
