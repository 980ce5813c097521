package client

import (
	"context"
	"iter"

	"github.com/apiary-net/apiary/cells/api/models"
)

// NodePages lists the nodes the agent knows, sorted by cluster and name,
// a page at a time.
func (c *Client) NodePages(ctx context.Context, opts ListOptions) iter.Seq2[*models.NodeList, error] {
	return pages(c, ctx, "/v1/node", nil, opts, func(p *models.NodeList) string { return p.Continue })
}

// Nodes returns every node the agent knows, sorted by cluster and name.
func (c *Client) Nodes(ctx context.Context) ([]models.Node, error) {
	return collect(c.NodePages(ctx, ListOptions{}), func(p *models.NodeList) []models.Node { return p.Items })
}
