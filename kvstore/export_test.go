package kvstore

import "time"

// SetWatchRetryForTest changes the watch retry backoff for one test.
func SetWatchRetryForTest(minWait, maxWait time.Duration) (restore func()) {
	old := watchRetry
	watchRetry.Min, watchRetry.Max = minWait, maxWait
	return func() { watchRetry = old }
}
