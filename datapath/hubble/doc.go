// Package hubble turns the datapath's events into Hubble flows and serves
// them with Hubble's gRPC API (the observer.Observer and peer.Peer
// services of the packages under datapath/hubble/api), so that the hubble CLI and
// hubble-relay work against an apiary agent.
//
//   - Parser converts a monitor event (drop or trace, package
//     datapath/monitor) into a flow.Flow with Cilium's field semantics,
//     each end enriched from the endpoint manager, the ipcache and the
//     identity labels (Resolver).
//   - Ring keeps the last flows (--hubble-event-buffer-capacity) and the
//     losses, and wakes the followers.
//   - Filter matches Hubble's FlowFilter (allow and deny lists).
//   - Observer and Peer are the gRPC services.
//
// The hubblecell package runs them in the agent: it subscribes to the
// monitor (which owns the one reader of the events ring buffer) and
// serves the API on --hubble-socket-path and --hubble-listen-address.
//
// It may import packages of cells, kvstore, policy and datapath, nothing
// of clustermesh (docs/design.md, Layers).
package hubble

// Hubble's API packages (api/flow, api/observer, api/peer, api/relay),
// generated from Cilium's .proto files (api/README.md).
//go:generate ./api/gen.sh
