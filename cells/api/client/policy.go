package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/apiary-net/apiary/cells/api/models"
)

// PolicyGet returns the rules in force, only those carrying every label
// of lbls when given.
func (c *Client) PolicyGet(ctx context.Context, lbls []string) (*models.PolicyRules, error) {
	var out models.PolicyRules
	if _, err := c.Get(ctx, "/v1/policy"+labelsQuery(lbls), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// PolicyPut imports policy documents (YAML or JSON) all or nothing and
// returns the new revision.
func (c *Client) PolicyPut(ctx context.Context, documents []byte) (uint64, error) {
	out, err := c.PolicyImport(ctx, documents)
	if err != nil {
		return 0, err
	}
	return out.Revision, nil
}

// PolicyImport is PolicyPut returning the whole answer: the revision and
// the documents' warnings.
func (c *Client) PolicyImport(ctx context.Context, documents []byte) (*models.PolicyRevision, error) {
	_, body, err := c.do(ctx, http.MethodPut, "/v1/policy", bytes.NewReader(documents), nil)
	if err != nil {
		return nil, err
	}
	var out models.PolicyRevision
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("decode answer to PUT /v1/policy: %w", err)
	}
	return &out, nil
}

// PolicyDelete deletes the rules carrying every label of lbls, or every
// rule imported through the API when lbls is empty.
func (c *Client) PolicyDelete(ctx context.Context, lbls []string) (*models.PolicyRevision, error) {
	path := "/v1/policy" + labelsQuery(lbls)
	if len(lbls) == 0 {
		path += "?all=true"
	}
	_, body, err := c.do(ctx, http.MethodDelete, path, nil, nil)
	if err != nil {
		return nil, err
	}
	var out models.PolicyRevision
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("decode answer to DELETE /v1/policy: %w", err)
	}
	return &out, nil
}

// PolicyTrace asks the agent whether traffic between two label sets is
// allowed, and why.
func (c *Client) PolicyTrace(ctx context.Context, req models.PolicyTraceRequest) (*models.PolicyTrace, error) {
	_, body, err := c.Do(ctx, http.MethodPost, "/v1/policy/trace", req)
	if err != nil {
		return nil, err
	}
	var out models.PolicyTrace
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("decode answer to POST /v1/policy/trace: %w", err)
	}
	return &out, nil
}

// labelsQuery is "?labels=a,b" or "".
func labelsQuery(lbls []string) string {
	if len(lbls) == 0 {
		return ""
	}
	return "?labels=" + url.QueryEscape(strings.Join(lbls, ","))
}
