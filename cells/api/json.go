package api

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"path"

	"github.com/apiary-net/apiary/cells/api/models"
)

// WriteJSON writes v as an indented JSON body with the given status code.
func WriteJSON(w http.ResponseWriter, code int, v any) {
	body, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		WriteError(w, http.StatusInternalServerError, fmt.Errorf("encode response: %w", err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(append(body, '\n'))
}

// WriteError writes {"error": err.Error()} with the given status code.
func WriteError(w http.ResponseWriter, code int, err error) {
	msg := http.StatusText(code)
	if err != nil {
		msg = err.Error()
	}
	body, _ := json.Marshal(models.Error{Error: msg})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(append(body, '\n'))
}

// jsonErrors wraps a ServeMux so that its own "404 page not found" and
// "405 method not allowed" answers become JSON errors, and so that a
// panicking handler answers 500 with a JSON error.
type jsonErrors struct {
	mux *http.ServeMux
	log *slog.Logger
}

func (j jsonErrors) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer j.recoverPanic(w, r)
	// ServeMux would redirect (with an HTML body) to the cleaned path,
	// and a client that follows would get another resource than it named
	// (/v1/kvstore/a/../b is key b): refuse instead.
	if clean := cleanPath(r.URL.Path); clean != r.URL.Path {
		WriteError(w, http.StatusBadRequest, fmt.Errorf("path %q has empty, . or .. segments (its clean form is %q)", r.URL.Path, clean))
		return
	}
	h, pattern := j.mux.Handler(r)
	if pattern != "" {
		j.mux.ServeHTTP(w, r)
		return
	}
	// No pattern: ServeMux's not-found or method-not-allowed handler.
	rec := &statusRecorder{header: http.Header{}}
	h.ServeHTTP(rec, r)
	switch rec.code {
	case http.StatusMethodNotAllowed:
		allow := rec.header.Get("Allow")
		w.Header().Set("Allow", allow)
		WriteError(w, rec.code, fmt.Errorf("method %s not allowed on %s (allowed: %s)",
			r.Method, r.URL.Path, allow))
	case http.StatusNotFound:
		WriteError(w, rec.code, fmt.Errorf("no API endpoint %s %s", r.Method, r.URL.Path))
	default:
		WriteError(w, rec.code, fmt.Errorf("%s %s: %s", r.Method, r.URL.Path, http.StatusText(rec.code)))
	}
}

// cleanPath is the canonical form of a request path, as ServeMux
// computes it: rooted, without empty, . and .. segments, with the
// trailing slash kept.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	clean := path.Clean(p)
	if p[len(p)-1] == '/' && clean != "/" {
		clean += "/"
	}
	return clean
}

func (j jsonErrors) recoverPanic(w http.ResponseWriter, r *http.Request) {
	v := recover()
	if v == nil {
		return
	}
	if v == http.ErrAbortHandler {
		panic(v)
	}
	j.log.Error("API handler panicked", "method", r.Method, "path", r.URL.Path, "panic", v)
	WriteError(w, http.StatusInternalServerError, fmt.Errorf("internal error serving %s %s", r.Method, r.URL.Path))
}

// statusRecorder keeps the status code and headers of a response and
// drops its body.
type statusRecorder struct {
	header http.Header
	code   int
}

func (s *statusRecorder) Header() http.Header { return s.header }

func (s *statusRecorder) Write(p []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	return len(p), nil
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
}
