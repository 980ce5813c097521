package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/apiary-net/apiary/cells/api/models"
)

// DefaultSocketPath is where the agent listens unless its --socket-path
// says otherwise.
const DefaultSocketPath = "/var/run/apiary/apiary.sock"

// dialTimeout bounds connecting to the socket.
const dialTimeout = 5 * time.Second

// maxErrorBody is how much of a non-JSON error body is kept.
const maxErrorBody = 512

// Client talks to one agent over its unix socket. It is safe for
// concurrent use.
type Client struct {
	socket string
	http   *http.Client
}

// New returns a client for the agent listening on socketPath. It does not
// connect until the first request.
func New(socketPath string) *Client {
	c := &Client{socket: socketPath}
	dialer := &net.Dialer{Timeout: dialTimeout}
	transport := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			conn, err := dialer.DialContext(ctx, "unix", socketPath)
			if err != nil {
				return nil, &UnreachableError{Socket: socketPath, Err: err}
			}
			return conn, nil
		},
		MaxIdleConns:    2,
		IdleConnTimeout: 30 * time.Second,
	}
	c.http = &http.Client{Transport: transport}
	return c
}

// SocketPath returns the socket the client talks to.
func (c *Client) SocketPath() string { return c.socket }

// Close closes idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// Get sends a GET request and decodes a 2xx JSON answer into out. okCodes
// lists further status codes whose body is a document and not an error.
func (c *Client) Get(ctx context.Context, path string, out any, okCodes ...int) (int, error) {
	code, body, err := c.do(ctx, http.MethodGet, path, nil, okCodes)
	if err != nil {
		return code, err
	}
	if out == nil {
		return code, nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		return code, fmt.Errorf("decode answer to GET %s: %w", path, err)
	}
	return code, nil
}

// GetRaw sends a GET request and returns the body of a 2xx answer as is.
func (c *Client) GetRaw(ctx context.Context, path string) ([]byte, error) {
	_, body, err := c.do(ctx, http.MethodGet, path, nil, nil)
	return body, err
}

// Do sends a request with an optional JSON body and returns the status
// code and body of a 2xx answer; other answers become an *APIError.
func (c *Client) Do(ctx context.Context, method, path string, in any) (int, []byte, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, nil, fmt.Errorf("encode request %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	return c.do(ctx, method, path, body, nil)
}

func (c *Client) do(ctx context.Context, method, path string, in io.Reader, okCodes []int) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, "http://apiary-agent"+path, in)
	if err != nil {
		return 0, nil, fmt.Errorf("build request %s %s: %w", method, path, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, c.transportError(method, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, nil, fmt.Errorf("read answer to %s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 == 2 || containsCode(okCodes, resp.StatusCode) {
		return resp.StatusCode, body, nil
	}
	return resp.StatusCode, nil, &APIError{Method: method, Path: path, StatusCode: resp.StatusCode, Message: errorMessage(body)}
}

// transportError turns an error of the HTTP client into an
// *UnreachableError when the socket could not be dialled.
func (c *Client) transportError(method, path string, err error) error {
	var ue *UnreachableError
	if errors.As(err, &ue) {
		return ue
	}
	return fmt.Errorf("%s %s on %s: %w", method, path, c.socket, err)
}

// errorMessage extracts the "error" field, or a trimmed body.
func errorMessage(body []byte) string {
	var e models.Error
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		return e.Error
	}
	s := strings.TrimSpace(string(body))
	if len(s) > maxErrorBody {
		s = s[:maxErrorBody] + "..."
	}
	if s == "" {
		return "empty answer"
	}
	return strings.Join(strings.Fields(s), " ")
}

func containsCode(codes []int, code int) bool {
	for _, c := range codes {
		if c == code {
			return true
		}
	}
	return false
}
