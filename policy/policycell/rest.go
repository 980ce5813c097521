package policycell

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// newPutHandler serves PUT /v1/policy: the body's documents replace the
// API-imported policies of the same kind, namespace and name, all or
// nothing (`apiary policy import`). The body and its documents are
// bounded by --policy-max-input-size and --policy-max-document-size
// (413 past them), and the parse stops when the client goes away. With
// a state dir the import is kept there first (500 when it cannot be).
func newPutHandler(l *importer) api.HandlerOut {
	return api.NewHandlerOut(http.MethodPut, "/v1/policy", func(w http.ResponseWriter, r *http.Request) {
		limits := l.opts.Limits
		data, err := io.ReadAll(io.LimitReader(r.Body, limits.MaxInput()+1))
		switch {
		case err != nil:
			api.WriteError(w, http.StatusBadRequest, fmt.Errorf("read body: %w", err))
			return
		case int64(len(data)) > limits.MaxInput():
			api.WriteError(w, http.StatusRequestEntityTooLarge, fmt.Errorf("read body: %w", limits.InputTooLarge(-1)))
			return
		}
		pols, err := l.parse(r.Context(), "request", data)
		if err == nil && len(pols) == 0 {
			err = errors.New("parse request: no policy documents")
		}
		switch {
		case r.Context().Err() != nil:
			return // the client went away; nobody reads an answer
		case errors.Is(err, policyapi.ErrTooLarge):
			api.WriteError(w, http.StatusRequestEntityTooLarge, err)
			return
		case err != nil:
			api.WriteError(w, http.StatusBadRequest, err)
			return
		}
		rev, err := l.importAPI(r.Context(), data, pols)
		if err != nil {
			api.WriteError(w, http.StatusInternalServerError, err)
			return
		}
		answer := models.PolicyRevision{Revision: rev}
		for _, p := range pols {
			for _, warn := range p.Warnings {
				answer.Warnings = append(answer.Warnings, warn.String())
			}
		}
		api.WriteJSON(w, http.StatusOK, answer)
	})
}

// newGetHandler serves GET /v1/policy[?labels=a,b]: the rules in force,
// those carrying every given label when labels are given, at one
// revision. The rules are encoded one at a time into the answer (not
// paged: the list is the rule set of one revision).
func newGetHandler(repo *policy.Repository) api.HandlerOut {
	return api.NewHandlerOut(http.MethodGet, "/v1/policy", func(w http.ResponseWriter, r *http.Request) {
		sel, err := queryLabels(r)
		if err != nil {
			api.WriteError(w, http.StatusBadRequest, err)
			return
		}
		rev, rules := repo.Revision(), repo.Rules()
		api.WriteList(w, api.ListPage[*policyapi.Rule]{
			Fields:    []api.Field{{Name: "revision", Value: rev}},
			ItemsName: "rules",
			Items: func(yield func(*policyapi.Rule) bool) {
				for _, rule := range rules {
					if rule.Labels.HasAll(sel) && !yield(rule) {
						return
					}
				}
			},
		})
	})
}

// newDeleteHandler serves DELETE /v1/policy?labels=a,b (the rules
// carrying every label) and DELETE /v1/policy?all=true (every rule
// imported through the API; --policy-dir files keep theirs).
func newDeleteHandler(l *importer) api.HandlerOut {
	return api.NewHandlerOut(http.MethodDelete, "/v1/policy", func(w http.ResponseWriter, r *http.Request) {
		sel, err := queryLabels(r)
		if err != nil {
			api.WriteError(w, http.StatusBadRequest, err)
			return
		}
		if len(sel) == 0 && r.URL.Query().Get("all") != "true" {
			api.WriteError(w, http.StatusBadRequest, errors.New("give labels, or all=true to delete every rule imported through the API"))
			return
		}
		rev, deleted, err := l.deleteAPI(r.Context(), sel)
		if err != nil {
			api.WriteError(w, http.StatusInternalServerError, err)
			return
		}
		api.WriteJSON(w, http.StatusOK, models.PolicyRevision{Revision: rev, Deleted: &deleted})
	})
}

// queryLabels parses the labels query parameter: comma-separated labels,
// source k8s when absent.
func queryLabels(r *http.Request) (labels.Labels, error) {
	q := r.URL.Query().Get("labels")
	if q == "" {
		return nil, nil
	}
	ls, err := labels.ParseList(labels.SourceK8s, strings.Split(q, ",")...)
	if err != nil {
		return nil, fmt.Errorf("labels: %w", err)
	}
	return ls, nil
}
