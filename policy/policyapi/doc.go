// Package policyapi is apiary's policy rule model and the parsers that produce
// it from Kubernetes NetworkPolicy (networking.k8s.io/v1) and Cilium's
// CiliumNetworkPolicy and CiliumClusterwideNetworkPolicy (cilium.io/v2)
// documents, L3/L4 fields only.
//
// It is the first step of docs/design.md, Flow 1: policy -> BPF policy
// map: a file, the
// API or a Kubernetes watcher hands documents to ParseDocuments, which
// decodes them strictly, validates every field, translates NetworkPolicy
// into the same model as Cilium's rules, injects the policy namespace and
// the local-cluster default into selectors and labels every rule with its
// origin. A document with any error is rejected whole, with one error per
// problem naming the file, document, rule and field. The repository and
// selector cache (package policy) consume the resulting Rules; they never
// see the wire formats.
//
// The model, from the outside in:
//
//   - Policy: one document (or List item), its kind, namespace, name and
//     origin labels, and its Rules.
//   - Rule: a Subject (the endpoints, or for clusterwide host policies the
//     nodes, it applies to), allow and deny PeerRules per direction and the
//     per-direction DefaultDeny flags.
//   - PeerRule: the Peers (L3) it matches and the Ports and ICMP types (L4)
//     it allows or denies.
//   - Peer: an EndpointSelector over identity labels (endpoints, entities,
//     wildcards) or a CIDRRule that the engine resolves through CIDR
//     identities.
//
// Inputs are bounded (Limits, ErrTooLarge): a document's decoded size,
// YAML aliases expanded, is counted while it is decoded, so a small
// document of aliases to a large string is refused before it expands; a
// parse stops when its context ends (ParseDocumentsContext).
//
// Fields apiary does not enforce (L7 rules, toFQDNs, toServices,
// fromRequires, ...) are rejected with ErrUnsupported rather than ignored,
// so a policy never silently means less than it says.
//
// It may import policy/labels, YAML and pflag only, so every package of
// the engine may import it (docs/design.md, Layers). NamedPort and
// CheckPortName are the tree's one named-port type and one port-name
// (IANA service name) check: the engine, the ipcache, the endpoint
// manager and simulate use them.
package policyapi
