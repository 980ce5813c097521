package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strconv"
)

// ListOptions set the paging of a list request.
type ListOptions struct {
	// Limit is the page size; 0 lets the agent choose
	// (models.DefaultListLimit). The agent lowers it to
	// models.MaxListLimit.
	Limit int
	// Continue resumes a listing after the page that gave this token.
	Continue string
}

// pages asks for path (with query) page after page, following the
// continue token that cont reads from each page, and yields each page as
// it is decoded. An error is yielded once and ends the listing.
func pages[P any](c *Client, ctx context.Context, path string, query url.Values, opts ListOptions,
	cont func(*P) string) iter.Seq2[*P, error] {
	return func(yield func(*P, error) bool) {
		token := opts.Continue
		for {
			q := url.Values{}
			for k, v := range query {
				q[k] = v
			}
			if opts.Limit > 0 {
				q.Set("limit", strconv.Itoa(opts.Limit))
			}
			if token != "" {
				q.Set("continue", token)
			}
			u := path
			if len(q) > 0 {
				u += "?" + q.Encode()
			}
			page := new(P)
			if err := c.getDecode(ctx, u, page); err != nil {
				yield(nil, err)
				return
			}
			if !yield(page, nil) {
				return
			}
			if token = cont(page); token == "" {
				return
			}
		}
	}
}

// collect gathers the items of every page.
func collect[P, T any](seq iter.Seq2[*P, error], items func(*P) []T) ([]T, error) {
	var out []T
	for page, err := range seq {
		if err != nil {
			return nil, err
		}
		out = append(out, items(page)...)
	}
	if out == nil {
		out = []T{}
	}
	return out, nil
}

// getDecode sends a GET request and decodes a 2xx answer into out as it
// arrives, without holding the body whole.
func (c *Client) getDecode(ctx context.Context, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://apiary-agent"+path, nil)
	if err != nil {
		return fmt.Errorf("build request GET %s: %w", path, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return c.transportError(http.MethodGet, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody*4))
		return &APIError{Method: http.MethodGet, Path: path, StatusCode: resp.StatusCode, Message: errorMessage(body)}
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("decode answer to GET %s: %w", path, err)
	}
	return nil
}
