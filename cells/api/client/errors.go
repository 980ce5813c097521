package client

import (
	"errors"
	"fmt"
	"net/http"
)

// ErrNotReachable is matched (errors.Is) by every UnreachableError.
var ErrNotReachable = errors.New("apiary-agent is not reachable")

// UnreachableError says that nothing accepted a connection on the socket.
type UnreachableError struct {
	// Socket is the path that was dialled.
	Socket string
	// Err is the dial error.
	Err error
}

// Error says in one line which socket could not be reached and why.
func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach apiary-agent at %s: is it running? (%v)", e.Socket, e.Err)
}

// Unwrap returns the dial error.
func (e *UnreachableError) Unwrap() error { return e.Err }

// Is matches ErrNotReachable.
func (e *UnreachableError) Is(target error) bool { return target == ErrNotReachable }

// APIError is an error answer of the agent.
type APIError struct {
	// Method and Path are those of the request.
	Method, Path string
	// StatusCode is the HTTP status of the answer.
	StatusCode int
	// Message is the "error" field of the JSON body (or the body itself
	// when it is not JSON).
	Message string
}

// Error formats the answer: "GET /v1/foo: 404 Not Found: no API endpoint GET /v1/foo".
func (e *APIError) Error() string {
	return fmt.Sprintf("%s %s: %d %s: %s", e.Method, e.Path, e.StatusCode, http.StatusText(e.StatusCode), e.Message)
}
