package client_test

import (
	"errors"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
)

// TestPagesFollowTokens serves ten identities in pages through a real
// api-server: the client follows the tokens, stops asking when the
// caller stops, and yields an error once.
func TestPagesFollowTokens(t *testing.T) {
	var requests atomic.Int32
	path := filepath.Join(t.TempDir(), "apiary.sock")
	celltest.StartWithFlags(t, []string{"socket-path=" + path}, api.Cell,
		cell.Provide(func() api.HandlerOut {
			return api.NewHandlerOut(http.MethodGet, "/v1/identity", func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				q, err := api.ParseListQuery(r, "identity")
				if err != nil {
					api.WriteError(w, http.StatusBadRequest, err)
					return
				}
				from, _ := strconv.Atoi(q.After)
				var ids []models.Identity
				for id := from + 1; id <= min(from+q.Limit, 10); id++ {
					ids = append(ids, models.Identity{ID: uint32(id), Labels: []string{}})
				}
				var cont string
				if from+q.Limit < 10 {
					cont = api.ContinueToken("identity", strconv.Itoa(from+q.Limit))
				}
				api.WriteList(w, api.ListPage[models.Identity]{ItemsName: "items", Items: slices.Values(ids), Continue: cont})
			})
		}))
	c := client.New(path)
	defer c.Close()

	var got []uint32
	for page, err := range c.IdentityPages(t.Context(), client.ListOptions{Limit: 3}) {
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range page.Items {
			got = append(got, id.ID)
		}
	}
	if want := []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}; !slices.Equal(got, want) || requests.Load() != 4 {
		t.Errorf("ids %v in %d requests, want %v in 4", got, requests.Load(), want)
	}

	requests.Store(0)
	for range c.IdentityPages(t.Context(), client.ListOptions{Limit: 3}) {
		break
	}
	if requests.Load() != 1 {
		t.Errorf("%d requests for one page, want 1", requests.Load())
	}

	var errs []error
	for page, err := range c.IdentityPages(t.Context(), client.ListOptions{Continue: "bogus"}) {
		if page != nil {
			t.Errorf("page %+v with a bad token", page)
		}
		errs = append(errs, err)
	}
	var apiErr *client.APIError
	if len(errs) != 1 || !errors.As(errs[0], &apiErr) || apiErr.StatusCode != http.StatusBadRequest {
		t.Errorf("errors = %v, want one 400", errs)
	}
}
