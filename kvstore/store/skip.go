package store

import (
	"bytes"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"time"

	"golang.org/x/time/rate"
)

// Kinds of entries a WatchStore skips. A KeyFactory says which kind an
// entry is by returning an error that matches one with errors.Is (wrap
// it, or make a package's own sentinel with KindError); an error of no
// kind counts as malformed.
var (
	// ErrMalformed marks a value that cannot be decoded or is
	// inconsistent with its key.
	ErrMalformed = errors.New("malformed entry")
	// ErrRefused marks a value that decodes but is not for this reader:
	// an entry of another cluster, an identity outside its range.
	ErrRefused = errors.New("refused entry")
)

// KindError returns an error with message msg that errors.Is matches
// with kind (ErrMalformed or ErrRefused): a package's own sentinel of
// one of the store's kinds.
func KindError(kind error, msg string) error { return &kindError{msg: msg, kind: kind} }

type kindError struct {
	msg  string
	kind error
}

func (e *kindError) Error() string        { return e.msg }
func (e *kindError) Is(target error) bool { return target == e.kind }

// SkipReason is the kind of a skipped entry, as metrics label it.
type SkipReason string

// The skip reasons.
const (
	SkipMalformed SkipReason = "malformed"
	SkipRefused   SkipReason = "refused"
)

// skipReasonOf classifies a KeyFactory's error.
func skipReasonOf(err error) SkipReason {
	if errors.Is(err, ErrRefused) {
		return SkipRefused
	}
	return SkipMalformed
}

// SkippedEntry is a key a WatchStore skips.
type SkippedEntry struct {
	// Key is the full kvstore key.
	Key string
	// Reason is the kind of the KeyFactory's error.
	Reason SkipReason
	// Err is the KeyFactory's error.
	Err error
}

// SkipStats count the entries a WatchStore skips now, per kind.
type SkipStats struct {
	Malformed, Refused int
	// Last is the most recently skipped of them (zero when none is).
	Last SkippedEntry
}

// Total is the number of skipped entries.
func (s SkipStats) Total() int { return s.Malformed + s.Refused }

// skipEntry is a skipped key with the value that was refused.
type skipEntry struct {
	SkippedEntry
	value []byte
	seq   uint64
	stale bool
}

// skipLogEvery and skipLogBurst limit the log lines about skipped
// entries of one store: a writer spraying bad keys cannot flood the log.
const (
	skipLogEvery = 6 * time.Second
	skipLogBurst = 10
)

// skipLog logs skipped entries, rate limited; lines it drops are counted
// in the next one.
type skipLog struct {
	limiter    *rate.Limiter
	suppressed int
}

func newSkipLog() skipLog {
	return skipLog{limiter: rate.NewLimiter(rate.Every(skipLogEvery), skipLogBurst)}
}

// log writes one line unless the limit is reached; w.mu is held.
func (l *skipLog) log(log *slog.Logger, scope string, e SkippedEntry) {
	if !l.limiter.Allow() {
		l.suppressed++
		return
	}
	attrs := []any{"scope", scope, "key", e.Key, "reason", e.Reason, "error", e.Err}
	if l.suppressed > 0 {
		attrs = append(attrs, "not-logged-before", l.suppressed)
		l.suppressed = 0
	}
	log.Warn("Skipping kvstore entry", attrs...)
}

// skipLocked records that the entry named name with value was refused;
// the same value skipped again (listed again) is not counted twice.
func (w *WatchStore) skipLocked(fullKey, name string, value []byte, err error) {
	if s, ok := w.skipped[name]; ok && bytes.Equal(s.value, value) {
		s.stale = false
		return
	}
	w.skipSeq++
	e := SkippedEntry{Key: fullKey, Reason: skipReasonOf(err), Err: err}
	w.skipped[name] = &skipEntry{SkippedEntry: e, value: value, seq: w.skipSeq}
	w.metrics.Skipped.WithLabelValues(w.scope, string(e.Reason)).Inc()
	w.skipLog.log(w.log, w.scope, e)
}

// SkipStats counts the entries skipped now, per kind.
func (w *WatchStore) SkipStats() SkipStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	var st SkipStats
	var last uint64
	for _, s := range w.skipped {
		if s.Reason == SkipRefused {
			st.Refused++
		} else {
			st.Malformed++
		}
		if s.seq > last {
			last, st.Last = s.seq, s.SkippedEntry
		}
	}
	return st
}

// Skipped returns the entries skipped now, sorted by key.
func (w *WatchStore) Skipped() []SkippedEntry {
	w.mu.Lock()
	out := make([]SkippedEntry, 0, len(w.skipped))
	for _, s := range w.skipped {
		out = append(out, s.SkippedEntry)
	}
	w.mu.Unlock()
	slices.SortFunc(out, func(a, b SkippedEntry) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// IsSkipped reports whether the entry named name is skipped now.
func (w *WatchStore) IsSkipped(name string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.skipped[name]
	return ok
}
