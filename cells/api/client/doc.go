// Package client talks to the agent's REST API on its unix socket. The
// apiary CLI uses it, and so do tests that start the api-server cell.
//
//	c := client.New("/var/run/apiary/apiary.sock")
//	st, err := c.Status(ctx)
//
// A socket nobody listens on gives an *UnreachableError ("cannot reach
// apiary-agent at ...: is it running?"); an error answer from the agent
// gives an *APIError with its status code and message.
//
// It is a leaf (docs/design.md, Layers): any package may import it, and it
// may import only the standard library, third-party modules and the other
// leaves (cells/localnode/cluster, cells/api/models, cells/api/client and
// cells/version).
package client
