package models

import (
	"encoding/json"
	"fmt"
	"time"
)

// State is the state of one subsystem in `apiary status`.
type State string

// The states, from best to worst. Disabled subsystems do not count
// towards the overall state.
const (
	StateOk       State = "Ok"
	StateDisabled State = "Disabled"
	StateWarning  State = "Warning"
	StateFailure  State = "Failure"
)

var stateRank = map[State]int{StateDisabled: 0, StateOk: 1, StateWarning: 2, StateFailure: 3}

// Worse returns the worse of two states; Disabled never wins over Ok.
func Worse(a, b State) State {
	if stateRank[b] > stateRank[a] {
		return b
	}
	return a
}

// Status is the body of GET /v1/status.
type Status struct {
	// State is the worst state of all entries (Ok when there are none).
	State State `json:"state"`
	// Entries are the subsystems in a stable order.
	Entries []StatusEntry `json:"entries"`
}

// StatusEntry is one line of `apiary status`.
type StatusEntry struct {
	// Name names the subsystem ("Hive", "Controllers").
	Name string `json:"name"`
	// State is the subsystem's state.
	State State `json:"state"`
	// Message is a one-line summary.
	Message string `json:"message"`
	// Details are extra lines (shown with --verbose, or when not Ok).
	Details []string `json:"details,omitempty"`
	// LastProbe is when the last answer to a probe arrived (nil before
	// the first answer).
	LastProbe *time.Time `json:"last-probe,omitempty"`
	// ProbeDuration is how long the last answered probe took.
	ProbeDuration Duration `json:"probe-duration"`
	// Stale is true while a probe has been unanswered for too long.
	Stale bool `json:"stale,omitempty"`
	// StaleSince is when the entry became stale.
	StaleSince *time.Time `json:"stale-since,omitempty"`
}

// Duration is a time.Duration that encodes as a string ("1.5ms").
type Duration time.Duration

// MarshalJSON encodes the duration as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON decodes a Go duration string or a number of nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var n int64
		if err := json.Unmarshal(b, &n); err != nil {
			return fmt.Errorf("decode duration %s: want a string like \"1.5s\" or nanoseconds", b)
		}
		*d = Duration(n)
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("decode duration: %w", err)
	}
	*d = Duration(v)
	return nil
}

// String formats the duration like time.Duration.
func (d Duration) String() string { return time.Duration(d).String() }
