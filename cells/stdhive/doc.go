// Package stdhive builds a hive the way every apiary program does: with
// the project's module-private providers, so that each module of the
// hive gets its own job.Group (cells/job) and controller.Manager
// (cells/controller), next to the logger, health and lifecycle the hive
// itself gives every module. The agent (cmd/apiary-agent), the test
// hives of cells/celltest, the embedding example (hack/embed) and the
// benchmarks build their hives with New.
//
// It is a package of its own because the framework (cells/hive) must
// not depend on the jobs and controllers built on it.
//
// It may import the standard library, third-party modules and other
// packages of cells, nothing of a later layer (docs/design.md, Layers).
package stdhive
