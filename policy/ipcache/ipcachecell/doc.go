// Package ipcachecell wires the ipcache (package policy/ipcache) into the
// agent: the ipcache cell with its listeners' value group (ListenerOut),
// the publication of local endpoints and the watch of the cluster's
// entries when a kvstore is enabled, GET /v1/ipcache[/{ip}] and the
// "IPCache" status line (docs/design.md, Flow 2: remote cluster -> ipcache
// -> BPF).
//
// It may import packages of cells, kvstore and policy, nothing of datapath
// or clustermesh and nothing that touches BPF (docs/design.md, Layers).
package ipcachecell
