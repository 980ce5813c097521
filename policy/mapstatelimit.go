package policy

// MapStateLimit is the number of keys an endpoint's map state may have
// in the datapath: the size of its BPF policy map (Cilium's
// --bpf-policy-map-max). A larger map state does not fit, and the
// datapath refuses it for that endpoint. The datapath's loader cell owns
// the flag and provides the limit; the policy cell's trace reports map
// states against it (0: the agent runs no datapath).
type MapStateLimit int
