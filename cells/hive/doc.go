// Package hive assembles cells into a running agent.
//
// New applies the cells to a go.uber.org/dig container; RegisterFlags
// exposes every Config cell's flags on a command line; Populate resolves
// configuration (command line, environment, --config-dir, defaults) and
// runs the invokes, which construct what they need; Start runs the start
// hooks in construction order (rolling back on failure); Stop runs the
// stop hooks in reverse. Run does all of it and waits for a signal or a
// shutdown request. Print and PrintDot show what a hive is made of.
//
// It may import the standard library, third-party modules and cells/cell,
// not cells/job: the framework stands alone (docs/design.md, Layers).
package hive
