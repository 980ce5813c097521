package safefile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// ErrNotRegular is wrapped by the error of a path that is not a regular
// file after following symlinks: a named pipe, a device, a socket, a
// directory.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is wrapped by the error of a file over the size limit.
var ErrTooLarge = errors.New("file too large")

// Defaults of Limits.
const (
	// DefaultMaxSize is 16 MiB, far more than any configuration or
	// policy file needs.
	DefaultMaxSize = 16 << 20
	// DefaultTimeout is how long a read may take: a local file is read
	// in microseconds; only a hung mount takes seconds.
	DefaultTimeout = 10 * time.Second
)

// Limits bound one Read. The zero value means the defaults.
type Limits struct {
	// MaxSize is the largest file accepted, in bytes.
	MaxSize int64
	// Timeout bounds opening and reading the file.
	Timeout time.Duration
}

func (l Limits) withDefaults() Limits {
	if l.MaxSize <= 0 {
		l.MaxSize = DefaultMaxSize
	}
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	return l
}

// readFn reads a file; tests replace it to simulate a hung mount.
var readFn = readRegular

// Read returns the content of path if it is a regular file (after
// following symlinks) of at most lim.MaxSize bytes, read within
// lim.Timeout and before ctx ends. Errors are *fs.PathError naming the
// path; they wrap ErrNotRegular, ErrTooLarge, os.ErrDeadlineExceeded,
// the context's error, or the system's (fs.ErrNotExist, ...).
//
// The file is read by a goroutine; when the deadline passes first, Read
// returns and the goroutine ends when the system call does (a read from
// a hung mount cannot be interrupted).
func Read(ctx context.Context, path string, lim Limits) ([]byte, error) {
	lim = lim.withDefaults()
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1) // the reader never blocks on it
	go func() {
		data, err := readFn(path, lim.MaxSize)
		done <- result{data, err}
	}()
	timer := time.NewTimer(lim.Timeout)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.data, r.err
	case <-timer.C:
		return nil, &fs.PathError{Op: "read", Path: path,
			Err: fmt.Errorf("not read within %s: %w", lim.Timeout, os.ErrDeadlineExceeded)}
	case <-ctx.Done():
		return nil, &fs.PathError{Op: "read", Path: path, Err: context.Cause(ctx)}
	}
}

// readRegular checks the type and size of path before opening it (so a
// device is never opened), opens it without blocking, checks the open
// file again (it may have been swapped) and reads at most max+1 bytes.
func readRegular(path string, max int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		// The errors open would give (missing, no permission), and
		// worded so.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			pe.Op = "open"
		}
		return nil, err
	}
	if err := check(fi, max); err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := check(fi, max); err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &fs.PathError{Op: "read", Path: path, Err: tooLarge(max)}
	}
	return data, nil
}

// check refuses a file that is not regular or is over max bytes.
func check(fi fs.FileInfo, max int64) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w (%s)", ErrNotRegular, typeName(fi.Mode()))
	}
	if fi.Size() > max {
		return tooLarge(max)
	}
	return nil
}

func tooLarge(max int64) error {
	return fmt.Errorf("%w: over %d bytes", ErrTooLarge, max)
}

// typeName names a file type the way ls -l and stat(1) do.
func typeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	}
	return "irregular file"
}
