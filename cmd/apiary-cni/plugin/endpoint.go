package plugin

import (
	"context"
	"fmt"
	"net/http"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
)

// putAttempts bounds the ids one listing of the endpoints tries, and
// listAttempts the listings, when other creations take ids meanwhile.
const (
	putAttempts  = 8
	listAttempts = 3
)

// findEndpoint returns the endpoint of the container's interface, or nil.
func findEndpoint(ctx context.Context, c *client.Client, containerID, ifName string) (*models.Endpoint, map[uint16]bool, error) {
	eps, err := c.Endpoints(ctx)
	if err != nil {
		return nil, nil, err
	}
	used := make(map[uint16]bool, len(eps))
	for i := range eps {
		if eps[i].ContainerID == containerID && eps[i].InterfaceName == ifName {
			return &eps[i], used, nil
		}
		used[eps[i].ID] = true
	}
	return nil, used, nil
}

// ensureEndpoint returns the endpoint of the container's interface,
// creating it when there is none: at the id derived from the container,
// or the next free one.
func ensureEndpoint(ctx context.Context, c *client.Client, containerID string, req models.EndpointRequest) (*models.Endpoint, bool, error) {
	var lastErr error
	for range listAttempts {
		ep, used, err := findEndpoint(ctx, c, containerID, req.InterfaceName)
		if err != nil || ep != nil {
			return ep, false, err
		}
		for _, id := range candidateIDs(preferredID(containerID, req.InterfaceName), used, putAttempts) {
			ep, err := c.EndpointPut(ctx, id, req)
			if isStatus(err, http.StatusConflict) {
				lastErr = err // taken meanwhile, or the container got one
				continue
			}
			return ep, err == nil, err
		}
		if lastErr == nil {
			return nil, false, fmt.Errorf("create endpoint: the node has no free endpoint id")
		}
	}
	return nil, false, fmt.Errorf("create endpoint: %w", lastErr)
}
