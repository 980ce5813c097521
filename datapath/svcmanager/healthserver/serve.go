package healthserver

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// serving is an HTTP server on one listener: a health-check NodePort's,
// or the kube-proxy health check's.
type serving struct {
	srv  *http.Server
	done chan struct{} // closed once Serve returned
}

// serve listens on addr and serves h there until stop.
func serve(log *slog.Logger, addr string, h http.Handler) (*serving, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &serving{
		srv:  &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)},
		done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		s.srv.Serve(ln) // returns when stopped
	}()
	return s, nil
}

// stop shuts the server down, giving the requests in flight a second.
func (s *serving) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if s.srv.Shutdown(ctx) != nil {
		s.srv.Close()
	}
	<-s.done
}
