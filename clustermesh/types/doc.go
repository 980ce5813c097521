// Package types holds what identifies a cluster in a mesh: its name, its
// id and the mesh size (--cluster-name, --cluster-id,
// --max-connected-clusters), with the one validation of cluster names
// and ids every package uses. It is a leaf: it imports nothing of
// apiary, so the agent's cells, the policy engine, the offline
// simulator and (later) the clustermesh watchers can all use it.
package types
