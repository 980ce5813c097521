// Package statedir owns the agent's state directory (--state-dir), where
// cells keep what must survive an agent restart: endpoint state for
// restore, the policies imported through the API (policy/api.json), and
// by default the API socket.
//
// The statedir cell provides a Dir; the directory is created (mode 0750)
// when the hive starts, and the "State dir" line of `apiary status` says
// whether it is still there and how much space is left.
//
// It may import the standard library, third-party modules and other
// packages of cells, nothing of a later layer (docs/design.md, Layers).
package statedir
