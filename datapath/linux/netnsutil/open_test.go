package netnsutil_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
)

// TestOpenRefusesWhatIsNotANetNS: a named pipe is refused at once (an
// open that blocked would hang the agent until someone wrote to it), and
// so are a plain file, a directory, a device and another kind of
// namespace; the process's own network namespace opens.
func TestOpenRefusesWhatIsNotANetNS(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		give string
		want string // "" opens
	}{
		{name: "own network namespace", give: "/proc/self/ns/net"},
		{name: "named pipe", give: fifo, want: "not a network namespace (a named pipe)"},
		{name: "plain file", give: plain, want: "not a network namespace (a file, not a namespace)"},
		{name: "directory", give: dir, want: "not a network namespace (a directory)"},
		{name: "device", give: "/dev/null", want: "not a network namespace (a character device)"},
		{name: "mount namespace", give: "/proc/self/ns/mnt", want: "not a network namespace (another kind of namespace)"},
		{name: "missing", give: filepath.Join(dir, "missing"), want: "no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				ns, err := netnsutil.Open(tt.give)
				if err == nil {
					ns.Close()
				}
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("Open(%s) blocked", tt.give)
			}
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Open(%s): %v", tt.give, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.give) {
				t.Fatalf("Open(%s) = %v, want an error naming the path and saying %q", tt.give, err, tt.want)
			}
			if tt.name != "missing" && !errors.Is(err, netnsutil.ErrNotNetNS) {
				t.Fatalf("error %v is not ErrNotNetNS", err)
			}
		})
	}
}
