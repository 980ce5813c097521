package node

import "github.com/apiary-net/apiary/cells/cell"

// NodeHandlerOut registers a NodeHandler with the node manager cell
// (datapath/node/nodecell): return it from a constructor registered with
// cell.Provide.
type NodeHandlerOut struct {
	cell.Out

	Handler NodeHandler `group:"node-handlers"`
}
