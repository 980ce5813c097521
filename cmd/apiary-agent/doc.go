// Command apiary-agent is the apiary node agent. See package
// github.com/apiary-net/apiary/cmd/apiary-agent/cmd for its command line
// and package agent for the cells it runs.
//
// It is a program: it may import any package of apiary (docs/design.md,
// Layers).
package main
