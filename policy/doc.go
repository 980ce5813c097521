// Package policy is the policy engine: it turns the rules parsed by
// policy/policyapi into the map state of each local endpoint, the key ->
// allow/deny table the datapath enforces (docs/design.md, Flow 1: policy
// -> BPF policy map).
//
// The flow, for the policy cell and the endpoint code that drive it:
//
//   - Repository holds the rules in force. Add, ReplaceByLabels and
//     DeleteByLabels change them (a policy's rules carry its origin
//     labels, so a policy is replaced or deleted by those); each change
//     is serialized and bumps the revision (Revision, WaitForRevision).
//   - Repository.Resolve(identity) returns the SelectorPolicy of an
//     identity at the current revision, shared by all endpoints with that
//     identity: the entries of every rule selecting it, peers registered
//     as selectors in a selectorcache.Cache, and the default-deny
//     direction flags (api.Rule.DefaultDeny; enableDefaultDeny is already
//     folded into them by policy/policyapi).
//   - SelectorPolicy.DistillPolicy(namedPorts) returns the endpoint's
//     EndpointPolicy: its MapState, with port ranges split into port
//     prefixes and named ports resolved: in ingress entries against the
//     endpoint's declared ports, in egress entries per destination
//     identity against the ports its endpoints declare (the repository's
//     PeerNamedPorts, set with SetPeerNamedPorts; PeerPortTable fills
//     one endpoint by endpoint). A direction not in default deny gets an
//     allow key for any peer.
//   - Repository.PeerNamedPortsChanged(ids) re-resolves the egress named
//     ports of those identities in every endpoint policy, incrementally.
//   - Identity churn reaches the cache (an identity.Observer); it tells
//     each SelectorPolicy which identities its selectors gained or lost,
//     and each EndpointPolicy adds or removes just those keys.
//     ConsumeMapChanges returns the resulting delta for the datapath;
//     ConsumeMapState returns the whole map state and starts the next
//     delta from it, for a datapath writing a map in full.
//   - After a revision change the caller resolves again, distills a new
//     EndpointPolicy and Detaches the old one (which releases the old
//     policy's selectors); rule changes recompute, identity changes do not.
//
// Verdict evaluates a MapState for one packet: any covering deny key
// wins, then any covering allow key, else the traffic is denied. It is
// what the trace and simulate commands build on.
//
// CIDR peers select the local CIDR identities (identity.CIDRLabels of a
// prefix) known to the cache; allocating those identities for the
// prefixes in rules (Repository.CIDRPrefixes) is up to the caller.
//
// policycell.Cell runs the engine in the agent: it provides the
// Repository and the cache (an identity observer), loads rules from
// --policy-dir (a watched
// directory; each file's rules replaced atomically, tagged with
// apiary:io.apiary.policy.file) and from PUT/GET/DELETE /v1/policy,
// allocates the CIDR identities of Repository.CIDRPrefixes, debounces
// endpoint regeneration (RegenerationRequests, which the endpoint
// manager subscribes to), feeds the peer named ports from the ipcache
// (an ipcache listener, requesting a regeneration when they change) and
// serves POST /v1/policy/trace.
//
// Endpoints re-distill when their named ports change, and resolve again
// when their identity does. A stale policy (an older revision's) releases
// its selectors when its last endpoint detaches and registers them again
// if it is distilled once more.
//
// It is part of the policy engine: it may import the leaves and the
// engine's packages (policy, policy/identity, policy/labels,
// policy/policyapi, policy/selectorcache and policy/source), never cells
// or kvstore, so it holds no agent glue (docs/design.md, Layers).
// MapStateLimit is the plain type through which the datapath's policy
// map size reaches the policy cell.
package policy
