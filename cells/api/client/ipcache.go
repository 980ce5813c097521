package client

import (
	"context"
	"net/url"

	"github.com/apiary-net/apiary/cells/api/models"
)

// IPCacheList returns the ipcache entries, all of them or those within
// prefix (a CIDR or an IP) when it is not empty.
func (c *Client) IPCacheList(ctx context.Context, prefix string) (*models.IPCache, error) {
	path := "/v1/ipcache"
	if prefix != "" {
		path += "?prefix=" + url.QueryEscape(prefix)
	}
	var out models.IPCache
	if _, err := c.Get(ctx, path, &out); err != nil {
		return nil, err
	}
	return &out, nil
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
