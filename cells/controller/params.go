package controller

import (
	"context"
	"time"
)

// Params describe what a controller does and how often.
type Params struct {
	// DoFunc is run at once, then every RunInterval, and retried with
	// backoff on error.
	DoFunc func(ctx context.Context) error
	// StopFunc, if set, runs once when the controller is removed or its
	// manager stops.
	StopFunc func(ctx context.Context) error
	// RunInterval is the time between successful runs; 0 runs once (and
	// again on Update or Trigger).
	RunInterval time.Duration
	// ErrorRetryBaseDuration is the first wait after a failure (default
	// 1s); it doubles with each consecutive failure, and each wait is
	// stretched at random by up to job.DefaultJitter of it.
	ErrorRetryBaseDuration time.Duration
	// MaxRetryInterval caps the error backoff (default 1m, or RunInterval
	// when that is larger).
	MaxRetryInterval time.Duration
	// NoErrorRetry disables the error backoff: a failed run waits for the
	// next RunInterval like a successful one.
	NoErrorRetry bool
}
