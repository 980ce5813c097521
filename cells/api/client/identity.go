package client

import (
	"context"
	"net/url"

	"github.com/apiary-net/apiary/cells/api/models"
)

// IdentityList returns every identity the agent knows, sorted by id.
func (c *Client) IdentityList(ctx context.Context) ([]models.Identity, error) {
	var out []models.Identity
	if _, err := c.Get(ctx, "/v1/identity", &out); err != nil {
		return nil, err
	}
	return out, nil
}

// IdentityGet returns one identity; id is a number or a reserved name
// ("world").
func (c *Client) IdentityGet(ctx context.Context, id string) (*models.Identity, error) {
	var out models.Identity
	if _, err := c.Get(ctx, "/v1/identity/"+url.PathEscape(id), &out); err != nil {
		return nil, err
	}
	return &out, nil
}
