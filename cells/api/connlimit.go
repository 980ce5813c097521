package api

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apiary-net/apiary/cells/api/models"
)

// Refusing a connection over the cap: the request headers are read for
// at most refuseReadTimeout (so that the client reads the 503 as the
// answer to its request), and at most maxRefusing connections are
// refused that way at once; past that they are closed at once.
const (
	refuseReadTimeout  = time.Second
	refuseWriteTimeout = 100 * time.Millisecond
	maxRefusing        = 16
	refuseHeaderBytes  = 16 << 10
)

// limitWarnInterval spaces the warnings about the connection cap.
const limitWarnInterval = time.Minute

// connLimiter is a listener that holds at most max connections. When a
// connection arrives at the cap, the held connection that has waited
// longest on its client (for a request, in a body read, or for it to
// take an answer) is closed to make room; when every held connection is being served, the new one
// is refused with 503. So clients that open connections and then stall
// cannot lock others out.
type connLimiter struct {
	net.Listener
	max int
	log *slog.Logger

	closeOnce sync.Once
	closeErr  error

	mu       sync.Mutex
	conns    map[*trackedConn]struct{}
	refusing map[net.Conn]struct{}
	wg       sync.WaitGroup
	closed   bool
	lastWarn time.Time
	evicted  uint64 // since lastWarn
	refused  uint64 // since lastWarn
}

var (
	_ net.Listener = (*connLimiter)(nil)
	_ net.Conn     = (*trackedConn)(nil)
)

func newConnLimiter(l net.Listener, maxConns int, log *slog.Logger) *connLimiter {
	return &connLimiter{
		Listener: l, max: maxConns, log: log,
		conns: map[*trackedConn]struct{}{}, refusing: map[net.Conn]struct{}{},
	}
}

// Accept returns the next connection admitted under the cap.
func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		tc := &trackedConn{Conn: c, limiter: l}
		tc.waitingSince.Store(time.Now().UnixNano())
		if l.admit(tc) {
			return tc, nil
		}
	}
}

// admit takes tc in, evicting a stalled connection at the cap, or starts
// refusing it.
func (l *connLimiter) admit(tc *trackedConn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.conns) >= l.max {
		victim := l.stalledLocked()
		if victim == nil {
			l.refuseLocked(tc.Conn)
			return false
		}
		delete(l.conns, victim)
		_ = victim.closeConn()
		l.evicted++
		l.warnLocked()
	}
	l.conns[tc] = struct{}{}
	return true
}

// stalledLocked returns the held connection that has waited longest on
// its client, or nil when every one is being served.
func (l *connLimiter) stalledLocked() *trackedConn {
	var oldest *trackedConn
	var since int64
	for c := range l.conns {
		if !c.waitingOnClient() {
			continue
		}
		if s := c.waitingSince.Load(); oldest == nil || s < since {
			oldest, since = c, s
		}
	}
	return oldest
}

// refuseLocked answers 503 on c from a goroutine, or closes c at once
// when enough are being refused already.
func (l *connLimiter) refuseLocked(c net.Conn) {
	l.refused++
	l.warnLocked()
	if l.closed || len(l.refusing) >= maxRefusing {
		_ = c.Close()
		return
	}
	l.refusing[c] = struct{}{}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		refuse(c, l.max)
		l.mu.Lock()
		delete(l.refusing, c)
		l.mu.Unlock()
	}()
}

// warnLocked logs the evictions and refusals, at most once a
// limitWarnInterval.
func (l *connLimiter) warnLocked() {
	now := time.Now()
	if now.Sub(l.lastWarn) < limitWarnInterval {
		return
	}
	l.log.Warn("API connection limit reached: closing stalled connections and refusing new ones",
		"max", l.max, "evicted", l.evicted, "refused", l.refused)
	l.lastWarn, l.evicted, l.refused = now, 0, 0
}

// Close stops accepting, closes the connections being refused and waits
// for their goroutines. Held connections are the HTTP server's to close.
// Closing again does nothing.
func (l *connLimiter) Close() error {
	l.closeOnce.Do(func() {
		l.closeErr = l.Listener.Close()
		l.mu.Lock()
		l.closed = true
		for c := range l.refusing {
			_ = c.Close()
		}
		l.mu.Unlock()
		l.wg.Wait()
	})
	return l.closeErr
}

// closeStalled closes the held connections that wait on their client
// (idle, sending headers, or in a body read), so that a graceful
// shutdown waits only for requests being served.
func (l *connLimiter) closeStalled() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for c := range l.conns {
		if c.waitingOnClient() {
			delete(l.conns, c)
			_ = c.closeConn()
		}
	}
}

func (l *connLimiter) remove(c *trackedConn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
}

// refuse reads the request headers (briefly) and answers 503.
func refuse(c net.Conn, maxConns int) {
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(refuseReadTimeout))
	if _, err := http.ReadRequest(bufio.NewReader(io.LimitReader(c, refuseHeaderBytes))); err != nil {
		return
	}
	body, _ := json.Marshal(models.Error{Error: fmt.Sprintf(
		"the agent holds its maximum of %d API connections (--api-max-connections), all busy: try again", maxConns)})
	body = append(body, '\n')
	_ = c.SetWriteDeadline(time.Now().Add(refuseWriteTimeout))
	_, _ = fmt.Fprintf(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"+
		"Connection: close\r\nRetry-After: 1\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
}

// trackedConn is a connection held by a connLimiter. It knows whether
// the server is serving it or waiting on its client.
type trackedConn struct {
	net.Conn
	limiter *connLimiter
	once    sync.Once

	// serving is set while a handler runs.
	serving atomic.Bool
	// inBodyRead is set while the handler waits for request body bytes.
	inBodyRead atomic.Bool
	// waitingSince is when the connection last began waiting on its
	// client (accepted, its handler done, idle after an answer), in unix
	// nanoseconds.
	waitingSince atomic.Int64
}

func (c *trackedConn) waitingOnClient() bool {
	return !c.serving.Load() || c.inBodyRead.Load()
}

// Close removes the connection from the limiter and closes it.
func (c *trackedConn) Close() error {
	c.limiter.remove(c)
	return c.closeConn()
}

func (c *trackedConn) closeConn() error {
	err := net.ErrClosed
	c.once.Do(func() { err = c.Conn.Close() })
	return err
}

// connState follows the server's view of a connection: idle after an
// answer, it waits for the client's next request.
func connState(c net.Conn, state http.ConnState) {
	if tc, ok := c.(*trackedConn); ok && state == http.StateIdle {
		tc.waitingSince.Store(time.Now().UnixNano())
	}
}

// connKey is the context key of the *trackedConn of a request.
type connKey struct{}

// connContext puts the tracked connection in the request contexts.
func connContext(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*trackedConn); ok {
		return context.WithValue(ctx, connKey{}, tc)
	}
	return ctx
}
