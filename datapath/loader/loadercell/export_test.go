package loadercell

import "time"

// SetNodePortRetry sets how long after a failed attachment the next
// attempt comes, for a test; it returns the previous value.
func SetNodePortRetry(d time.Duration) time.Duration {
	prev := nodePortRetry
	nodePortRetry = d
	return prev
}
