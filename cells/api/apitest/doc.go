// Package apitest holds clients of the REST API that misbehave on
// purpose (they stall, or send a byte at a time), for the tests of the
// api-server's timeouts and connection cap, in cells/api and against the
// whole agent.
package apitest
