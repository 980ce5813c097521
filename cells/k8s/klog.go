package k8s

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	"k8s.io/klog/v2"
)

// klog is process-wide: client-go logs through it from every informer.
// It is pointed once at a handler that forwards to the log of the latest
// Kubernetes client built, so that a process with several hives (tests:
// two agents side by side) does not race on klog's logger.
var (
	klogOnce    sync.Once
	klogCurrent atomic.Pointer[slog.Handler]
)

// setKlogLogger sends client-go's logs to log.
func setKlogLogger(log *slog.Logger) {
	h := log.Handler()
	klogCurrent.Store(&h)
	klogOnce.Do(func() { klog.SetSlogLogger(slog.New(switchHandler{})) })
}

// switchHandler is the handler stored in klogCurrent, with the
// attributes and groups added to it since.
type switchHandler struct {
	wrap func(slog.Handler) slog.Handler // nil: none added
}

func (s switchHandler) handler() slog.Handler {
	h := *klogCurrent.Load()
	if s.wrap != nil {
		h = s.wrap(h)
	}
	return h
}

func (s switchHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return s.handler().Enabled(ctx, l)
}

func (s switchHandler) Handle(ctx context.Context, r slog.Record) error {
	return s.handler().Handle(ctx, r)
}

func (s switchHandler) with(f func(slog.Handler) slog.Handler) switchHandler {
	prev := s.wrap
	return switchHandler{wrap: func(h slog.Handler) slog.Handler {
		if prev != nil {
			h = prev(h)
		}
		return f(h)
	}}
}

func (s switchHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return s.with(func(h slog.Handler) slog.Handler { return h.WithAttrs(as) })
}

func (s switchHandler) WithGroup(name string) slog.Handler {
	return s.with(func(h slog.Handler) slog.Handler { return h.WithGroup(name) })
}
