// Package cmd is the command line of apiary-agent: the root command runs
// the hive until SIGINT or SIGTERM, `hive` prints its cells and
// configuration and `hive dot-graph` its dependency graph. Every cell's
// flags are flags of every command (they can also come from APIARY_*
// environment variables and --config-dir).
//
// It is a program: it may import any package of apiary (docs/design.md,
// Layers).
package cmd
