// Package apitest holds clients of the REST API that misbehave on
// purpose (they stall, or send a byte at a time), for the tests of the
// api-server's timeouts and connection cap, in cells/api and against the
// whole agent.
//
// It may import the standard library, third-party modules and other
// packages of cells, nothing of a later layer (docs/design.md, Layers).
package apitest
