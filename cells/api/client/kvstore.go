package client

import (
	"context"
	"iter"
	"net/url"
	"strings"

	"github.com/apiary-net/apiary/cells/api/models"
)

// KVStoreGet returns one key of the agent's kvstore.
func (c *Client) KVStoreGet(ctx context.Context, key string) (*models.KVPair, error) {
	var out models.KVPair
	if _, err := c.Get(ctx, "/v1/kvstore/"+escapeKey(key), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// KVStorePages lists the keys under prefix in byte order, a page at a
// time.
func (c *Client) KVStorePages(ctx context.Context, prefix string, opts ListOptions) iter.Seq2[*models.KVPairList, error] {
	return pages(c, ctx, "/v1/kvstore", url.Values{"prefix": {prefix}}, opts,
		func(p *models.KVPairList) string { return p.Continue })
}

// KVStoreList returns every key under prefix, sorted.
func (c *Client) KVStoreList(ctx context.Context, prefix string) ([]models.KVPair, error) {
	return collect(c.KVStorePages(ctx, prefix, ListOptions{}), func(p *models.KVPairList) []models.KVPair { return p.Items })
}

// escapeKey escapes each path segment of a key, keeping the slashes.
func escapeKey(key string) string {
	parts := strings.Split(key, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}
