package client

import (
	"context"
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

// KVStoreList returns every key under prefix, sorted.
func (c *Client) KVStoreList(ctx context.Context, prefix string) ([]models.KVPair, error) {
	var out []models.KVPair
	if _, err := c.Get(ctx, "/v1/kvstore?prefix="+url.QueryEscape(prefix), &out); err != nil {
		return nil, err
	}
	return out, nil
}

// escapeKey escapes each path segment of a key, keeping the slashes.
func escapeKey(key string) string {
	parts := strings.Split(key, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}
