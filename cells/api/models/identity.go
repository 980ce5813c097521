package models

// Identity is a security identity as served by GET /v1/identity and
// GET /v1/identity/{id}.
type Identity struct {
	// ID is the numeric identity.
	ID uint32 `json:"id"`
	// Labels are its labels as "source:key=value", sorted by key.
	Labels []string `json:"labels"`
	// Scope is "reserved", "global" (allocated through the kvstore, or in
	// memory in standalone mode) or "local" (CIDR identities).
	Scope string `json:"scope"`
}
