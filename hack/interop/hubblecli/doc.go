// Package hubblecli checks apiary's Hubble API with Cilium's own hubble
// CLI: the test builds github.com/cilium/cilium/hubble (the version
// hack/interop pins) into a temporary directory and runs it, as a
// separate process, against an agent whose observer is fed by real
// packets run through the endpoint programs (package
// datapath/hubble/hubbletest).
//
// It is a package of its own so that its test binary links apiary's
// generated Hubble API only: a binary holding both Cilium's generated
// flow package and apiary's would register the same protobuf names
// twice.
package hubblecli
