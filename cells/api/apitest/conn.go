package apitest

import (
	"bytes"
	"context"
	"net"
	"sync"
	"testing"
	"time"
)

// Conn is a raw connection to the API socket that notices when the agent
// closes it.
type Conn struct {
	net.Conn
	closed chan struct{}

	mu       sync.Mutex
	received bytes.Buffer // the first keepBytes
	total    int
}

// keepBytes is how much of what the agent sends a Conn keeps.
const keepBytes = 64 << 10

// Dial connects to the socket and reads what the agent sends in the
// background. The connection is closed (and its reader waited for) when
// the test ends.
func Dial(t testing.TB, socket string) *Conn {
	t.Helper()
	nc, err := net.Dial("unix", socket)
	if err != nil {
		t.Fatalf("dial %s: %v", socket, err)
	}
	c := &Conn{Conn: nc, closed: make(chan struct{})}
	go c.readAll()
	t.Cleanup(func() {
		nc.Close()
		<-c.closed
	})
	return c
}

func (c *Conn) readAll() {
	defer close(c.closed)
	buf := make([]byte, 4096)
	for {
		n, err := c.Conn.Read(buf)
		c.mu.Lock()
		c.received.Write(buf[:min(n, keepBytes-c.received.Len())])
		c.total += n
		c.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// Closed is closed once the connection is closed: a read returned EOF or
// an error.
func (c *Conn) Closed() <-chan struct{} { return c.closed }

// IsClosed reports whether the connection is closed.
func (c *Conn) IsClosed() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

// WaitClosed waits up to within for the connection to be closed and
// reports whether it was.
func (c *Conn) WaitClosed(within time.Duration) bool {
	t := time.NewTimer(within)
	defer t.Stop()
	select {
	case <-c.closed:
		return true
	case <-t.C:
		return false
	}
}

// Received returns what the agent sent so far (its first 64 KiB).
func (c *Conn) Received() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.received.String()
}

// ReceivedBytes returns how many bytes the agent sent so far.
func (c *Conn) ReceivedBytes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// Send writes s at once.
func (c *Conn) Send(t testing.TB, s string) {
	t.Helper()
	if _, err := c.Write([]byte(s)); err != nil {
		t.Fatalf("send %q: %v", s, err)
	}
}

// Trickle writes data a byte every interval until it is all written, the
// connection is closed or ctx ends, and returns how many bytes it wrote.
func (c *Conn) Trickle(ctx context.Context, data []byte, every time.Duration) int {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for i := range data {
		if _, err := c.Write(data[i : i+1]); err != nil {
			return i
		}
		select {
		case <-tick.C:
		case <-c.closed:
			return i + 1
		case <-ctx.Done():
			return i + 1
		}
	}
	return len(data)
}
