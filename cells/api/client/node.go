package client

import (
	"context"

	"github.com/apiary-net/apiary/cells/api/models"
)

// Nodes returns every node the agent knows, sorted by cluster and name.
func (c *Client) Nodes(ctx context.Context) ([]models.Node, error) {
	var out []models.Node
	if _, err := c.Get(ctx, "/v1/node", &out); err != nil {
		return nil, err
	}
	return out, nil
}
