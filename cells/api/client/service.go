package client

import (
	"context"
	"iter"

	"github.com/apiary-net/apiary/cells/api/models"
)

// ServicePages lists the services (their load-balancing frontends, and
// for global ones each sharing cluster's part), sorted by
// namespace/name, a page at a time (GET /v1/service).
func (c *Client) ServicePages(ctx context.Context, opts ListOptions) iter.Seq2[*models.GlobalServiceList, error] {
	return pages(c, ctx, "/v1/service", nil, opts, func(p *models.GlobalServiceList) string { return p.Continue })
}

// Services returns every service, sorted by namespace/name.
func (c *Client) Services(ctx context.Context) ([]models.GlobalService, error) {
	return collect(c.ServicePages(ctx, ListOptions{}), func(p *models.GlobalServiceList) []models.GlobalService { return p.Items })
}
