// Package api holds the Go code of Hubble's gRPC API, generated from the
// .proto files Cilium publishes (github.com/cilium/cilium/api/v1: flow,
// observer, peer and relay) by gen.sh with apiary's import paths. The
// protobuf package names are Hubble's (flow, observer, peer, relay), so the
// wire format and the gRPC service names (observer.Observer, peer.Peer)
// are Hubble's: the hubble CLI and hubble-relay talk to apiary's agent.
//
// A program must never link both these packages and Cilium's generated
// ones: both register the same protobuf names. hack/interop runs Cilium's
// hubble CLI as a separate process.
//
// It may be imported from the datapath layer on (docs/design.md, Layers).
package api

//go:generate ./gen.sh
