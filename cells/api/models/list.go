package models

// Paging of the list endpoints (GET /v1/ipcache, /v1/identity, /v1/node,
// /v1/endpoint,
// /v1/kvstore?prefix=). A list request takes ?limit=<n> (at most
// MaxListLimit; DefaultListLimit when absent) and ?continue=<token>; its
// answer holds at most limit items, in the list's order, and a
// "continue" token when more follow. Asking again with that token
// returns the items after the last one returned: an item that exists
// throughout a listing is returned exactly once, however the list
// changes meanwhile; items added or removed during it may or may not be.
const (
	// DefaultListLimit is the page size when a request gives no limit.
	DefaultListLimit = 1000
	// MaxListLimit is the largest page an agent returns; larger limits
	// are lowered to it.
	MaxListLimit = 10000
)

// IdentityList is the body of GET /v1/identity: identities sorted by id.
type IdentityList struct {
	Items []Identity `json:"items"`
	// Continue, when not empty, asks for the next page.
	Continue string `json:"continue,omitempty"`
}

// NodeList is the body of GET /v1/node: nodes sorted by cluster, then
// name.
type NodeList struct {
	// LocalCluster is the cluster of the agent's node: the CLI names the
	// nodes of other clusters <cluster>/<node>.
	LocalCluster string `json:"local-cluster"`
	Items        []Node `json:"items"`
	// Continue, when not empty, asks for the next page.
	Continue string `json:"continue,omitempty"`
}

// KVPairList is the body of GET /v1/kvstore?prefix=: keys in byte
// order.
type KVPairList struct {
	Items []KVPair `json:"items"`
	// Continue, when not empty, asks for the next page.
	Continue string `json:"continue,omitempty"`
}
