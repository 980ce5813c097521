// Package status collects the one-line status of every subsystem for
// `apiary status` and GET /v1/status.
//
// Cells register a Provider through the "status-providers" value group
// (see ProviderOut). The status cell probes every provider when it starts
// and every ProbeInterval after that, each provider in its own goroutine,
// never two probes of one provider at once. A probe that has not answered
// after StaleAfter marks its line as a stale Failure, without holding up
// the others. The cell registers two providers itself: "Hive" (the health
// tree) and "Controllers" (the job registry).
//
// It may import the standard library, third-party modules and other
// packages of cells, nothing of a later layer (docs/design.md, Layers).
package status
