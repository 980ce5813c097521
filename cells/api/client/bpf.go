package client

import (
	"context"
	"iter"
	"net/url"

	"github.com/apiary-net/apiary/cells/api/models"
)

// BPFIPCachePages lists the entries of the BPF ipcache map, a page at a
// time.
func (c *Client) BPFIPCachePages(ctx context.Context, opts ListOptions) iter.Seq2[*models.BPFIPCacheList, error] {
	return pages(c, ctx, "/v1/bpf/ipcache", nil, opts, func(p *models.BPFIPCacheList) string { return p.Continue })
}

// BPFCTPages lists the conntrack entries, a page at a time.
func (c *Client) BPFCTPages(ctx context.Context, opts ListOptions) iter.Seq2[*models.BPFCTList, error] {
	return pages(c, ctx, "/v1/bpf/ct", nil, opts, func(p *models.BPFCTList) string { return p.Continue })
}

// BPFLBPages lists the frontends of the BPF load-balancing maps with
// their backend slots, a page at a time.
func (c *Client) BPFLBPages(ctx context.Context, opts ListOptions) iter.Seq2[*models.BPFLBList, error] {
	return pages(c, ctx, "/v1/bpf/lb", nil, opts, func(p *models.BPFLBList) string { return p.Continue })
}

// BPFPolicy returns the entries of the BPF policy map of the endpoint
// with the given id (as typed by the user: the agent checks it); an
// endpoint without a policy map is an *APIError with status 404.
func (c *Client) BPFPolicy(ctx context.Context, endpointID string) (*models.BPFPolicy, error) {
	var out models.BPFPolicy
	if _, err := c.Get(ctx, "/v1/bpf/policy/"+url.PathEscape(endpointID), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// BPFMetrics returns the datapath's counters by reason and direction.
func (c *Client) BPFMetrics(ctx context.Context) (*models.BPFMetrics, error) {
	var out models.BPFMetrics
	if _, err := c.Get(ctx, "/v1/bpf/metrics", &out); err != nil {
		return nil, err
	}
	return &out, nil
}
