package api

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Modes of the socket and of the directory created for it.
const (
	socketMode    fs.FileMode = 0o660
	socketDirMode fs.FileMode = 0o750
)

// probeTimeout bounds the dial that checks whether an existing socket
// file is still served by another process.
const probeTimeout = time.Second

// ErrSocketInUse is returned when another process accepts connections on
// the socket path.
var ErrSocketInUse = errors.New("socket is in use by another process (is another apiary-agent running?)")

// listenUnix creates the socket's directory, removes a stale socket file
// and listens on path with mode 0660.
func listenUnix(ctx context.Context, path string) (*net.UnixListener, error) {
	if err := os.MkdirAll(filepath.Dir(path), socketDirMode); err != nil {
		return nil, fmt.Errorf("create socket directory: %w", err)
	}
	if err := removeStaleSocket(ctx, path); err != nil {
		return nil, err
	}
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("listen on socket %s: %w", path, err)
	}
	if err := os.Chmod(path, socketMode); err != nil {
		l.Close()
		return nil, fmt.Errorf("set mode of socket %s: %w", path, err)
	}
	return l, nil
}

// removeStaleSocket removes a socket file nobody accepts on. A socket that
// answers, or a path that is not a socket, is left alone and refused.
func removeStaleSocket(ctx context.Context, path string) error {
	info, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("check socket %s: %w", path, err)
	}
	if info.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("check socket %s: exists and is not a socket (%s), refusing to replace it", path, info.Mode().Type())
	}
	dialer := net.Dialer{Timeout: probeTimeout}
	conn, err := dialer.DialContext(ctx, "unix", path)
	if err == nil {
		conn.Close()
		return fmt.Errorf("listen on socket %s: %w", path, ErrSocketInUse)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("check socket %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove stale socket %s: %w", path, err)
	}
	return nil
}
