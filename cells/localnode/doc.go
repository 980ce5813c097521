// Package localnode is the local-node store: this node's name, address,
// pod CIDRs and cluster, from --node-name, --node-ip, --pod-cidr,
// --cluster-name, --cluster-id and --max-connected-clusters (the name and
// address are found on the host when not given).
//
// It is infrastructure below every domain cell: the identity allocator
// suffixes its kvstore references with the node's address, the ipcache
// publishes local endpoints with it as host IP, and the node manager
// registers the node in the kvstore, all from Store without composing
// the node manager. Later sources (Kubernetes' Node object) change the
// local node with Store.Update; subscribers hear of every change.
//
// It may import the standard library, third-party modules and other
// packages of cells, nothing of a later layer (docs/design.md, Layers).
package localnode
