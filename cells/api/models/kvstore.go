package models

// KVPair is one key of the kvstore with its value, as served by
// GET /v1/kvstore/{key} and GET /v1/kvstore?prefix=.
type KVPair struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	// Lease is the id of the lease the key is bound to (0: none), in hex
	// as etcdctl prints it.
	Lease string `json:"lease,omitempty"`
}
