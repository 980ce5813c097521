package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"

	"github.com/apiary-net/apiary/cells/api/models"
)

// Monitor streams the datapath's events of the given types (drop,
// policy-verdict; every type when none is given) until ctx ends or the
// agent closes the stream: it yields each message as it arrives (the
// first one is of type subscribed). A stream the agent ends ends the
// sequence without an error; a stream cut mid-message, or a refused
// request, yields an error.
func (c *Client) Monitor(ctx context.Context, types ...string) iter.Seq2[models.MonitorMessage, error] {
	return func(yield func(models.MonitorMessage, error) bool) {
		path := "/v1/monitor"
		if len(types) > 0 {
			path += "?" + url.Values{"type": types}.Encode()
		}
		body, err := c.stream(ctx, path)
		if err != nil {
			yield(models.MonitorMessage{}, err)
			return
		}
		defer body.Close()
		dec := json.NewDecoder(body)
		for {
			var msg models.MonitorMessage
			err := dec.Decode(&msg)
			switch {
			case errors.Is(err, io.EOF):
				return
			case errors.Is(err, io.ErrUnexpectedEOF) && atBoundary(dec):
				// The agent stopped and its connection closed between two
				// messages, before the stream's last chunk: the stream's end.
				return
			case err != nil && ctx.Err() != nil:
				return
			case err != nil:
				yield(models.MonitorMessage{}, fmt.Errorf("read GET %s: %w", path, err))
				return
			}
			if !yield(msg, nil) {
				return
			}
		}
	}
}

// stream sends a GET request and returns the body of a 2xx answer, to be
// read as it arrives.
func (c *Client) stream(ctx context.Context, path string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://apiary-agent"+path, nil)
	if err != nil {
		return nil, fmt.Errorf("build request GET %s: %w", path, err)
	}
	req.Header.Set("Accept", "application/x-ndjson")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.transportError(http.MethodGet, path, err)
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody*4))
		return nil, &APIError{Method: http.MethodGet, Path: path, StatusCode: resp.StatusCode, Message: errorMessage(body)}
	}
	return resp.Body, nil
}

// atBoundary reports whether dec holds no part of a message: only
// whitespace is buffered.
func atBoundary(dec *json.Decoder) bool {
	rest, _ := io.ReadAll(dec.Buffered())
	return len(bytes.TrimSpace(rest)) == 0
}
