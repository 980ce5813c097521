package models

import "encoding/json"

// PolicyRevision answers PUT and DELETE /v1/policy: the repository's
// revision after the change and, for DELETE, how many rules went.
type PolicyRevision struct {
	Revision uint64 `json:"revision"`
	Deleted  *int   `json:"deleted,omitempty"`
	// Warnings are what the imported documents say that was accepted but
	// not all enforced, or should be fixed ("<document>: <field>: <what>").
	Warnings []string `json:"warnings,omitempty"`
}

// PolicyRules answers GET /v1/policy: the rules in force (each as the
// policy engine's JSON form of a rule) and the revision.
type PolicyRules struct {
	Revision uint64            `json:"revision"`
	Rules    []json.RawMessage `json:"rules"`
}

// PolicyTraceRequest is the body of POST /v1/policy/trace: the labels of
// the source and destination ("k8s:app=web", "ns:prod" for the namespace
// label) and the destination port ("6379/TCP"; "6379" is TCP).
type PolicyTraceRequest struct {
	Source      []string `json:"source"`
	Destination []string `json:"destination"`
	DPort       string   `json:"dport"`
}

// PolicyTrace answers POST /v1/policy/trace: what each direction's
// policy says and the final verdict (allowed only if the egress policy
// of the source and the ingress policy of the destination both allow).
type PolicyTrace struct {
	Revision    uint64   `json:"revision"`
	Source      []string `json:"source"`
	Destination []string `json:"destination"`
	// SourcePod and DestinationPod say which pod or address a side was
	// named as ("cluster1/default/web (10.0.0.1)"); empty for labels.
	SourcePod      string `json:"sourcePod,omitempty"`
	DestinationPod string `json:"destinationPod,omitempty"`
	// SourceIdentity and DestinationIdentity are the sides' identities;
	// 0 for a label set no identity has.
	SourceIdentity      uint32 `json:"sourceIdentity"`
	DestinationIdentity uint32 `json:"destinationIdentity"`
	DPort               string `json:"dport"`
	// PolicyMapMax is the agent's --bpf-policy-map-max (0: the agent
	// runs no datapath).
	PolicyMapMax int                  `json:"policyMapMax"`
	Egress       PolicyTraceDirection `json:"egress"`
	Ingress      PolicyTraceDirection `json:"ingress"`
	Allowed      bool                 `json:"allowed"`
}

// PolicyTraceDirection is one direction of a trace: the egress of the
// source or the ingress of the destination.
type PolicyTraceDirection struct {
	// DefaultDeny is whether a rule puts the subject in default deny.
	DefaultDeny bool `json:"defaultDeny"`
	// Rules are the rules selecting the subject (considered).
	Rules []PolicyTraceRule `json:"rules"`
	// Allowed is the verdict for this direction.
	Allowed bool `json:"allowed"`
	// VerdictFrom says how Allowed was decided: from the subject's map
	// state (both sides have identities) or from the rules.
	VerdictFrom string `json:"verdictFrom"`
	// MapStateKeys is the size of the subject's map state (both
	// directions), the entries its policy map needs; 0 when the verdict
	// comes from the rules.
	MapStateKeys int `json:"mapStateKeys,omitempty"`
}

// VerdictFrom values.
const (
	VerdictFromMapState = "map state"
	VerdictFromRules    = "rules"
	// VerdictFromNeighbourDiscovery: ICMPv6 neighbour discovery (types
	// 133-137), which the datapath always lets through.
	VerdictFromNeighbourDiscovery = "neighbour discovery"
)

// PolicyTraceRule is one rule considered by a trace.
type PolicyTraceRule struct {
	// Policy names the rule: its origin labels and field.
	Policy string `json:"policy"`
	// Allows and Denies list the entries ("ingress[0]") that cover the
	// traffic.
	Allows []string `json:"allows,omitempty"`
	Denies []string `json:"denies,omitempty"`
}
