package client

import (
	"context"
	"net/http"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/version"
)

// Healthz returns the agent's health summary. A degraded agent answers
// 503 with a document, which is returned without an error.
func (c *Client) Healthz(ctx context.Context) (*models.Healthz, error) {
	var out models.Healthz
	if _, err := c.Get(ctx, "/v1/healthz", &out, http.StatusServiceUnavailable); err != nil {
		return nil, err
	}
	return &out, nil
}

// Hive returns the module tree with its health.
func (c *Client) Hive(ctx context.Context) (*models.Hive, error) {
	var out models.Hive
	if _, err := c.Get(ctx, "/v1/hive", &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Controllers returns the status of every controller.
func (c *Client) Controllers(ctx context.Context) ([]models.ControllerStatus, error) {
	var out []models.ControllerStatus
	if _, err := c.Get(ctx, "/v1/controllers", &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Status returns the status of every subsystem.
func (c *Client) Status(ctx context.Context) (*models.Status, error) {
	var out models.Status
	if _, err := c.Get(ctx, "/v1/status", &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Version returns the agent's version.
func (c *Client) Version(ctx context.Context) (*version.Info, error) {
	var out version.Info
	if _, err := c.Get(ctx, "/v1/version", &out); err != nil {
		return nil, err
	}
	return &out, nil
}
