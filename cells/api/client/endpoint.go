package client

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"strconv"

	"github.com/apiary-net/apiary/cells/api/models"
)

// EndpointPages lists the node's endpoints, sorted by id, a page at a
// time.
func (c *Client) EndpointPages(ctx context.Context, opts ListOptions) iter.Seq2[*models.EndpointList, error] {
	return pages(c, ctx, "/v1/endpoint", nil, opts, func(p *models.EndpointList) string { return p.Continue })
}

// Endpoints returns every endpoint of the node, sorted by id.
func (c *Client) Endpoints(ctx context.Context) ([]models.Endpoint, error) {
	return collect(c.EndpointPages(ctx, ListOptions{}), func(p *models.EndpointList) []models.Endpoint { return p.Items })
}

// Endpoint returns the endpoint with id.
func (c *Client) Endpoint(ctx context.Context, id uint16) (*models.Endpoint, error) {
	var out models.Endpoint
	if _, err := c.Get(ctx, "/v1/endpoint/"+strconv.Itoa(int(id)), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// EndpointPut creates the endpoint id and returns it.
func (c *Client) EndpointPut(ctx context.Context, id uint16, req models.EndpointRequest) (*models.Endpoint, error) {
	path := "/v1/endpoint/" + strconv.Itoa(int(id))
	_, body, err := c.Do(ctx, http.MethodPut, path, req)
	if err != nil {
		return nil, err
	}
	var out models.Endpoint
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("decode answer to PUT %s: %w", path, err)
	}
	return &out, nil
}

// EndpointDelete deletes the endpoint id.
func (c *Client) EndpointDelete(ctx context.Context, id uint16) error {
	_, _, err := c.Do(ctx, http.MethodDelete, "/v1/endpoint/"+strconv.Itoa(int(id)), nil)
	return err
}
