package api

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
)

// Handler is one REST endpoint that a cell adds to the API server.
type Handler struct {
	// Method is the HTTP method ("GET", "PUT", ...); empty matches every
	// method. A GET handler also answers HEAD.
	Method string
	// Path is a net/http.ServeMux path pattern: "/v1/endpoint/{id}".
	Path string
	// Handler serves the requests. Use WriteJSON, WriteList and WriteError.
	Handler http.Handler
	// Streaming exempts the handler from --api-write-timeout and from
	// --api-read-body-timeout: for endpoints that stream for as long as
	// the client listens (the monitor). Every other handler must have
	// written its answer within --api-write-timeout of the end of the
	// request's headers.
	Streaming bool
}

// HandlerOut provides a Handler to the API server: return it from a
// constructor registered with cell.Provide (not ProvidePrivate, which
// hides the value from the server).
type HandlerOut struct {
	cell.Out

	Handler Handler `group:"api-handlers"`
}

// NewHandlerOut is shorthand for a HandlerOut of a handler function.
func NewHandlerOut(method, path string, fn http.HandlerFunc) HandlerOut {
	return HandlerOut{Handler: Handler{Method: method, Path: path, Handler: fn}}
}

// Pattern returns the ServeMux pattern: "GET /v1/healthz".
func (h Handler) Pattern() string {
	if h.Method == "" {
		return h.Path
	}
	return h.Method + " " + h.Path
}

// owner names the code behind a handler for error messages.
func (h Handler) owner() string {
	if fn, ok := h.Handler.(http.HandlerFunc); ok {
		return cell.FuncName(fn)
	}
	return fmt.Sprintf("%T", h.Handler)
}

var methodPattern = regexp.MustCompile(`^[A-Z]+$`)

func (h Handler) validate() error {
	if fn, ok := h.Handler.(http.HandlerFunc); h.Handler == nil || ok && fn == nil {
		return errors.New("handler is nil")
	}
	switch {
	case h.Method != "" && !methodPattern.MatchString(h.Method):
		return fmt.Errorf("method %q is not an upper-case HTTP method", h.Method)
	case !strings.HasPrefix(h.Path, "/"):
		return fmt.Errorf("path %q does not start with /", h.Path)
	case strings.ContainsAny(h.Path, " \t\n"):
		return fmt.Errorf("path %q contains white space", h.Path)
	}
	return nil
}

// newMux registers the handlers on a new ServeMux. Invalid handlers,
// duplicates and conflicting patterns are errors that name the handlers.
func newMux(handlers []Handler, track *inflight) (*http.ServeMux, error) {
	mux := http.NewServeMux()
	seen := map[string]Handler{}
	var errs []error
	for _, h := range handlers {
		if err := h.validate(); err != nil {
			errs = append(errs, fmt.Errorf("register API handler %q (%s): %w", h.Pattern(), h.owner(), err))
			continue
		}
		key := h.Pattern()
		if prev, ok := seen[key]; ok {
			errs = append(errs, fmt.Errorf("register API handler %q: registered twice, by %s and by %s",
				key, prev.owner(), h.owner()))
			continue
		}
		if err := handle(mux, h, track); err != nil {
			errs = append(errs, fmt.Errorf("register API handler %q (%s): %w", key, h.owner(), err))
			continue
		}
		seen[key] = h
	}
	return mux, errors.Join(errs...)
}

// handle registers h, turning ServeMux's panics on bad or conflicting
// patterns into errors; track, unless nil, tracks a non-streaming
// handler's requests and gives them their deadline.
func handle(mux *http.ServeMux, h Handler, track *inflight) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	handler := h.Handler
	if h.Streaming {
		handler = withoutDeadlines(handler)
	} else if track != nil {
		handler = track.wrap(handler)
	}
	mux.Handle(h.Pattern(), handler)
	return nil
}

// withoutDeadlines clears the connection's read and write deadlines
// before next runs. (A read deadline left in place would cancel the
// request's context when it passes: the server reads in the background
// to notice clients that go away.)
func withoutDeadlines(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		_ = rc.SetWriteDeadline(time.Time{})
		_ = rc.SetReadDeadline(time.Time{})
		next.ServeHTTP(w, r)
	})
}
