package client

import (
	"context"
	"iter"
	"net/url"

	"github.com/apiary-net/apiary/cells/api/models"
)

// IPCachePages lists the ipcache entries, all of them or those within
// prefix (a CIDR or an IP) when it is not empty, sorted by prefix, a page
// at a time. Each page carries the cache's revision when it was read.
func (c *Client) IPCachePages(ctx context.Context, prefix string, opts ListOptions) iter.Seq2[*models.IPCache, error] {
	var q url.Values
	if prefix != "" {
		q = url.Values{"prefix": {prefix}}
	}
	return pages(c, ctx, "/v1/ipcache", q, opts, func(p *models.IPCache) string { return p.Continue })
}

// IPCacheList returns the ipcache entries, all of them or those within
// prefix when it is not empty, gathered from every page; the revision is
// that of the first page.
func (c *Client) IPCacheList(ctx context.Context, prefix string) (*models.IPCache, error) {
	var out *models.IPCache
	for page, err := range c.IPCachePages(ctx, prefix, ListOptions{}) {
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = &models.IPCache{Revision: page.Revision, Entries: []models.IPCacheEntry{}}
		}
		out.Entries = append(out.Entries, page.Entries...)
	}
	return out, nil
}

// IPCacheGet returns the entry of the longest prefix that holds ip; an
// IP no entry holds is an *APIError with status 404.
func (c *Client) IPCacheGet(ctx context.Context, ip string) (*models.IPCacheEntry, error) {
	var out models.IPCacheEntry
	if _, err := c.Get(ctx, "/v1/ipcache/"+url.PathEscape(ip), &out); err != nil {
		return nil, err
	}
	return &out, nil
}
