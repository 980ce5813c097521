// Package client talks to the agent's REST API on its unix socket. The
// apiary CLI uses it, and so do tests that start the api-server cell.
//
//	c := client.New("/var/run/apiary/apiary.sock")
//	st, err := c.Status(ctx)
//
// A socket nobody listens on gives an *UnreachableError ("cannot reach
// apiary-agent at ...: is it running?"); an error answer from the agent
// gives an *APIError with its status code and message.
package client
