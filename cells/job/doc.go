// Package job runs the goroutines a cell owns, tied to the hive's
// lifecycle.
//
// Every module gets a Group (provided privately when the hive is built
// with ModuleProviders in hive.Options.ModulePrivateProviders, as
// stdhive.New does). A job
// added while the cell is constructed becomes a lifecycle hook of its
// own: it starts after the hooks appended before it (a cell's job starts
// after the cell's own start hook when the cell appended that first) and
// stops before them. A job added once the group has started runs at once
// and stops with the group.
//
// Jobs are OneShot (run once, retry with backoff, optionally shut the
// agent down on failure), Timer (run every interval or when kicked) and
// Trigger (coalesce bursts of events into one run: after a quiet period,
// never later than a maximum delay after the first event, never two runs
// at once). Named controllers with status are in package controller.
//
// Backoff is the wait between retries of every retry loop of apiary: on
// k8s.io/apimachinery's wait.Backoff, exponential, with jitter so that
// the agents of a cluster do not retry a shared server in lockstep.
//
// It may import the standard library, third-party modules and other
// packages of cells, nothing of a later layer (docs/design.md, Layers).
package job
