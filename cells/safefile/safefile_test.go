package safefile_test

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/safefile"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	must(t, os.WriteFile(at("ok.yaml"), []byte("endpoints: []\n"), 0o644))
	must(t, os.WriteFile(at("big.yaml"), make([]byte, 101), 0o644))
	must(t, os.Symlink("ok.yaml", at("link.yaml")))
	must(t, os.Symlink("missing.yaml", at("dangling.yaml")))
	must(t, os.Symlink("/dev/zero", at("zero.yaml")))
	must(t, syscall.Mkfifo(at("fifo.yaml"), 0o644))
	must(t, os.Symlink("fifo.yaml", at("fifo-link.yaml")))
	must(t, os.Mkdir(at("dir.yaml"), 0o755))
	l, err := net.Listen("unix", at("sock.yaml"))
	must(t, err)
	defer l.Close()

	for _, tt := range []struct {
		name string
		give string
		want string // the content, or the error's text after "read <path>: "
		is   error
	}{
		{name: "regular file", give: "ok.yaml", want: "endpoints: []\n"},
		{name: "symlink to a regular file", give: "link.yaml", want: "endpoints: []\n"},
		{name: "over the size limit", give: "big.yaml", want: "file too large: over 100 bytes", is: safefile.ErrTooLarge},
		{name: "named pipe", give: "fifo.yaml", want: "not a regular file (named pipe)", is: safefile.ErrNotRegular},
		{name: "symlink to a named pipe", give: "fifo-link.yaml", want: "not a regular file (named pipe)", is: safefile.ErrNotRegular},
		{name: "symlink to /dev/zero", give: "zero.yaml", want: "not a regular file (character device)", is: safefile.ErrNotRegular},
		{name: "directory", give: "dir.yaml", want: "not a regular file (directory)", is: safefile.ErrNotRegular},
		{name: "socket", give: "sock.yaml", want: "not a regular file (socket)", is: safefile.ErrNotRegular},
		{name: "dangling symlink", give: "dangling.yaml", want: "no such file or directory", is: fs.ErrNotExist},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data, err := safefile.Read(context.Background(), at(tt.give), safefile.Limits{MaxSize: 100})
			if tt.is == nil {
				if err != nil || string(data) != tt.want {
					t.Fatalf("Read = %q, %v; want %q", data, err, tt.want)
				}
				return
			}
			if !errors.Is(err, tt.is) || !strings.HasSuffix(err.Error(), at(tt.give)+": "+tt.want) || data != nil {
				t.Fatalf("Read = %q, %v; want an error naming the path, ending %q and matching %v", data, err, tt.want, tt.is)
			}
		})
	}
}

// A file whose size says 0 but that holds more (procfs) is cut off at
// the limit.
func TestReadCutsOffAtTheLimit(t *testing.T) {
	fi, err := os.Stat("/proc/self/maps")
	if err != nil || fi.Size() != 0 {
		t.Skipf("no /proc/self/maps of size 0 (%v)", err)
	}
	if _, err := safefile.Read(context.Background(), "/proc/self/maps", safefile.Limits{MaxSize: 10}); !errors.Is(err, safefile.ErrTooLarge) {
		t.Fatalf("Read(/proc/self/maps, 10 bytes) = %v, want ErrTooLarge", err)
	}
	data, err := safefile.Read(context.Background(), "/proc/self/maps", safefile.Limits{})
	if err != nil || !strings.Contains(string(data), "[stack]") {
		t.Fatalf("Read(/proc/self/maps) = %.100q, %v", data, err)
	}
}

// A named pipe with a writer waiting is still refused, and the writer
// is not released by an open.
func TestReadPipeWithWriter(t *testing.T) {
	name := filepath.Join(t.TempDir(), "fifo")
	must(t, syscall.Mkfifo(name, 0o644))
	w, err := os.OpenFile(name, os.O_RDWR, 0) // O_RDWR does not wait for a reader
	must(t, err)
	defer w.Close()
	if _, err := w.WriteString("data\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := safefile.Read(context.Background(), name, safefile.Limits{}); !errors.Is(err, safefile.ErrNotRegular) {
		t.Fatalf("Read(fifo with data) = %v, want ErrNotRegular", err)
	}
}

func TestReadCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	name := filepath.Join(t.TempDir(), "f")
	must(t, os.WriteFile(name, []byte("x"), 0o644))
	// Either the read or the cancellation wins; a cancelled read names
	// the path and the cause.
	_, err := safefile.Read(ctx, name, safefile.Limits{Timeout: time.Hour})
	if err != nil && (!errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), name)) {
		t.Fatalf("Read(cancelled) = %v, want nil or context.Canceled naming the file", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
