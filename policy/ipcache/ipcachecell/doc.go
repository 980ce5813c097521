// Package ipcachecell runs the ipcache in the agent (Cell): it provides
// the ipcache.IPCache and the value group its listeners register with
// (ListenerOut), serves GET /v1/ipcache[/{ip}] (EntryModel is an
// entry's API form) and the "IPCache" status line, and with a kvstore
// publishes the local endpoints and watches the cluster's entries.
//
// Imports: the framework (cells/...), the kvstore and its store,
// policy/identity and policy/ipcache; never the datapath, which listens
// through the value group.
package ipcachecell
