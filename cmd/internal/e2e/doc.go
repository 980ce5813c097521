// Package e2e tests apiary-agent and the apiary CLI as a user runs them:
// it builds both binaries, starts the agent on a temporary socket and
// state dir, runs CLI commands against it and stops it with SIGTERM.
//
// It is a program: it may import any package of apiary (docs/design.md,
// Layers).
package e2e
