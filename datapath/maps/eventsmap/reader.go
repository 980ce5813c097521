package eventsmap

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/ringbuf"

	"github.com/apiary-net/apiary/datapath/maps/bpfmap"
)

// ErrClosed is returned by Read after Close.
var ErrClosed = errors.New("events reader closed")

// Reader reads events off the ring buffer.
type Reader struct {
	m  *ebpf.Map
	rd *ringbuf.Reader
}

// Open opens the events ring buffer pinned under root (creating it if
// missing) and a reader on it.
func Open(log *slog.Logger, root string) (*Reader, error) {
	m, err := bpfmap.OpenShared(log, root, MapName)
	if err != nil {
		return nil, err
	}
	rd, err := ringbuf.NewReader(m)
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("open events reader: %w", err)
	}
	return &Reader{m: m, rd: rd}, nil
}

// SetDeadline makes Read return os.ErrDeadlineExceeded once t passed with
// no event; the zero time waits forever.
func (r *Reader) SetDeadline(t time.Time) { r.rd.SetDeadline(t) }

// Read blocks until the next event (or Close, or the deadline).
func (r *Reader) Read() (Event, error) {
	rec, err := r.rd.Read()
	switch {
	case errors.Is(err, ringbuf.ErrClosed):
		return Event{}, ErrClosed
	case errors.Is(err, os.ErrDeadlineExceeded):
		return Event{}, err
	case err != nil:
		return Event{}, fmt.Errorf("read event: %w", err)
	}
	return Decode(rec.RawSample)
}

// Close stops a pending Read and releases the map.
func (r *Reader) Close() error {
	return errors.Join(r.rd.Close(), r.m.Close())
}
