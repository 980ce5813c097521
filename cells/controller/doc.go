// Package controller runs named controllers: restartable functions that
// run at once, then every interval, retry with backoff on error and keep
// a status that `apiary status --all-controllers` shows, in the manner of
// Cilium's controllers (e.g. ClusterMesh's remote-etcd-<cluster>).
//
// Every module gets a Manager, provided privately when the hive is built
// with ModuleProviders in hive.Options.ModulePrivateProviders and Cell in
// its cells; Cell's Registry lists the controllers of every module. A
// module's controllers start with its Manager's start hook (or at once
// when updated later) and stop, StopFuncs included, in its stop hook.
//
// It may import the standard library, third-party modules and other
// packages of cells, nothing of a later layer (docs/design.md, Layers).
package controller
