// Package hubblecell runs Hubble's observer in the agent (--enable-hubble):
// it subscribes to the datapath monitor (drops and traces; the monitor
// cell owns the one reader of the events ring buffer and switches the
// programs' trace events on while a subscriber listens), converts each
// event into a flow enriched from the endpoint manager, the ipcache and
// the identity cache, keeps the last --hubble-event-buffer-capacity flows,
// and serves Hubble's Observer and Peer gRPC services on
// --hubble-socket-path and --hubble-listen-address. With
// --hubble-metrics-server it exports Hubble's flow metrics.
//
// It may import packages of cells, kvstore, policy and datapath, nothing
// of clustermesh (docs/design.md, Layers).
package hubblecell
