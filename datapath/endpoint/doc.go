// Package endpoint is the endpoint manager: it creates, regenerates,
// restores and deletes the endpoints of this node (DESIGN.md's "Local
// endpoint" flow).
//
// Creating an endpoint (Manager.Create) takes its addresses from the IPAM
// (ipam), plumbs its veth through datapath.EndpointLinks, allocates the
// identity of its labels, puts its addresses into the ipcache (source
// local, published to the kvstore), resolves its policy into a map state
// written through datapath.PolicyMapWriter, attaches its programs through
// datapath.Loader and writes its state file. A failure at any step undoes
// the steps before it: nothing is applied partially. Delete undoes all of
// it. Regenerate resolves every endpoint's policy again after policy
// changes; the identity changes that reach an endpoint's map state
// between regenerations are applied incrementally (ApplyIncremental).
//
// Each endpoint has a state file in the state directory; Restore, at
// start, reserves the restored endpoints' addresses again before any new
// allocation, checks that their veths still exist (an endpoint whose veth
// vanished is removed), that their programs are attached, and
// regenerates them once identities are synced.
//
// The cell, REST API and status line live in endpointcell.
//
// Imports: package datapath (the interfaces it drives), the policy engine
// (policy, identity, labels, ipcache, and policyapi for named ports and
// their name check) and the endpoint IPAM; no Linux, netlink or
// cilium/ebpf, which stay behind the datapath interfaces.
package endpoint
