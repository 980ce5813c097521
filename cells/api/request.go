package api

import (
	"errors"
	"io"
	"net/http"
	"os"
	"time"
)

// requestLimits bounds the reading of request bodies and tells the
// connection limiter when a connection is being served: while a handler
// runs, except in its body reads.
//
// The server's own ReadTimeout is not used: it would also cancel the
// context of any handler still running when it passes (the server reads
// in the background to notice clients that go away, under the same
// deadline). Here a request with a body gets a read deadline of timeout
// from the start of its handler, lifted once the body is read whole.
type requestLimits struct {
	next    http.Handler
	timeout time.Duration
}

func (b requestLimits) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tc, _ := r.Context().Value(connKey{}).(*trackedConn)
	if tc != nil {
		tc.serving.Store(true)
		// Once the handler is done, the server only waits on the client:
		// to take the rest of the answer, or to send the rest of a body
		// the handler did not read.
		defer func() {
			tc.waitingSince.Store(time.Now().UnixNano())
			tc.serving.Store(false)
		}()
	}
	if r.Body != nil && r.Body != http.NoBody {
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(b.timeout))
		r.Body = &clientBody{ReadCloser: r.Body, conn: tc, rc: rc}
	}
	b.next.ServeHTTP(w, r)
}

// clientBody lifts the read deadline once the body is read whole, turns
// the deadline's error into one that says what happened, and marks its
// connection as waiting on the client while it waits for bytes.
type clientBody struct {
	io.ReadCloser
	conn *trackedConn // nil when the listener is not a connLimiter
	rc   *http.ResponseController
	done bool
}

// ErrBodyTimeout is the error of a request body read that passed
// --api-read-body-timeout.
var ErrBodyTimeout = errors.New("request body not received within --api-read-body-timeout")

func (b *clientBody) Read(p []byte) (int, error) {
	if b.conn != nil {
		b.conn.inBodyRead.Store(true)
		defer b.conn.inBodyRead.Store(false)
	}
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF && !b.done:
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = ErrBodyTimeout
	}
	return n, err
}
