package client

import (
	"context"
	"iter"
	"net/url"

	"github.com/apiary-net/apiary/cells/api/models"
)

// IdentityPages lists the identities the agent knows, sorted by id, a
// page at a time.
func (c *Client) IdentityPages(ctx context.Context, opts ListOptions) iter.Seq2[*models.IdentityList, error] {
	return pages(c, ctx, "/v1/identity", nil, opts, func(p *models.IdentityList) string { return p.Continue })
}

// IdentityList returns every identity the agent knows, sorted by id.
func (c *Client) IdentityList(ctx context.Context) ([]models.Identity, error) {
	return collect(c.IdentityPages(ctx, ListOptions{}), func(p *models.IdentityList) []models.Identity { return p.Items })
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
