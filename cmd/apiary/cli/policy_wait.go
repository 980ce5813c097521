package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/apiary-net/apiary/cells/api/client"
)

// waitRealized waits until every endpoint enforces revision rev (its
// policy revision is rev or later) and fails naming the endpoints that
// cannot (not-ready, with their error: a policy map too small, ...) or
// that did not within timeout. An agent without the endpoint API has
// nothing to wait for.
func waitRealized(ctx context.Context, c *client.Client, rev uint64, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		eps, err := c.Endpoints(ctx)
		var ae *client.APIError
		if errors.As(err, &ae) && ae.StatusCode == http.StatusNotFound {
			return nil
		}
		var pending, failed []string
		if err == nil {
			for _, e := range eps {
				switch {
				case e.Policy.Revision >= rev:
				case e.State == "not-ready":
					failed = append(failed, fmt.Sprintf("endpoint %d: %s", e.ID, e.Error))
				default:
					pending = append(pending, fmt.Sprintf("endpoint %d (%s, revision %d)", e.ID, e.State, e.Policy.Revision))
				}
			}
			if len(pending) == 0 && len(failed) == 0 {
				return nil
			}
			if len(pending) == 0 {
				return fmt.Errorf("revision %d cannot be enforced by %d endpoints: %s", rev, len(failed), strings.Join(failed, "; "))
			}
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return fmt.Errorf("wait for revision %d: %w", rev, err)
			}
			return fmt.Errorf("revision %d not enforced within %s: %s", rev, timeout, strings.Join(append(failed, pending...), "; "))
		case <-time.After(100 * time.Millisecond):
		}
	}
}
