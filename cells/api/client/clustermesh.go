package client

import (
	"context"

	"github.com/apiary-net/apiary/cells/api/models"
)

// ClusterMesh returns the state of the mesh (GET /v1/cluster/mesh).
func (c *Client) ClusterMesh(ctx context.Context) (*models.ClusterMesh, error) {
	var out models.ClusterMesh
	if _, err := c.Get(ctx, "/v1/cluster/mesh", &out); err != nil {
		return nil, err
	}
	return &out, nil
}
