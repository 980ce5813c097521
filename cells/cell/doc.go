// Package cell holds the building blocks of an apiary agent: modules,
// providers, invokes, decorators, configuration, lifecycle hooks, health
// and shutdown requests.
//
// A cell is a self-contained piece of the agent. It declares what it
// provides, what it needs, which flags it reads and what it does when the
// agent starts and stops. Cells are plain values; package hive turns a list
// of them into a dependency graph (go.uber.org/dig), populates it and runs
// the lifecycle. Every domain package of apiary exports one
// `var Cell = cell.Module(...)`; cmd/apiary-agent composes them, embedders
// compose their own subset, and package celltest starts any of them alone.
//
// It may import the standard library, third-party modules and other
// packages of cells, nothing of a later layer (docs/design.md, Layers).
package cell
