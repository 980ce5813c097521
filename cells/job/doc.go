// Package job runs the goroutines a cell owns, tied to the hive's
// lifecycle: they start when the hive starts (or at once when added to a
// started group) and the group's stop hook waits for all of them.
//
// Every module gets a Group (provided privately by the hive). Jobs are
// OneShot (run once, retry with backoff, optionally shut the agent down on
// failure), Timer (run every interval or when kicked) and Trigger (coalesce
// bursts of events into one run: after a quiet period, never later than a
// maximum delay after the first event, never two runs at once). Named
// controllers (UpdateController) are restartable periodic functions with
// error backoff and status, like Cilium's controller package; the Registry
// lists them all for `apiary status --all-controllers`.
package job
