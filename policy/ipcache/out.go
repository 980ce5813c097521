package ipcache

import "github.com/apiary-net/apiary/cells/cell"

// ListenerOut registers a Listener with the ipcache cell
// (policy/ipcache/ipcachecell): return it from a constructor registered
// with cell.Provide.
type ListenerOut struct {
	cell.Out

	Listener Listener `group:"ipcache-listeners"`
}
