// Package config is the programs' config map (bpf/lib/maps.h): one entry
// of node-wide flags the agent changes at run time. FlagVerdictEvents,
// set by the monitor while a client listens for policy verdicts, makes the
// programs report the verdicts of new flows; drops are reported
// regardless.
package config
