package api_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/models"
)

// TestWriteListIsWriteJSON checks that a streamed page is byte for byte
// what WriteJSON writes for the same struct.
func TestWriteListIsWriteJSON(t *testing.T) {
	entries := []models.IPCacheEntry{
		{Prefix: "10.0.0.1/32", Identity: 256, Source: "local", K8sNamespace: "default", K8sPodName: "web-<1>",
			NamedPorts: []models.NamedPort{{Name: "http", Port: 80, Protocol: "TCP"}}},
		{Prefix: "fd00::/64", Identity: 2, Reserved: "world", Source: "kvstore"},
	}
	tests := []struct {
		name    string
		give    api.ListPage[models.IPCacheEntry]
		want    any
		wantSub string
	}{
		{
			name: "entries and a token",
			give: api.ListPage[models.IPCacheEntry]{Fields: []api.Field{{Name: "revision", Value: uint64(7)}},
				ItemsName: "entries", Items: slices.Values(entries), Continue: "abc"},
			want: models.IPCache{Revision: 7, Entries: entries, Continue: "abc"},
		},
		{
			name: "last page",
			give: api.ListPage[models.IPCacheEntry]{Fields: []api.Field{{Name: "revision", Value: uint64(7)}},
				ItemsName: "entries", Items: slices.Values(entries[:1])},
			want: models.IPCache{Revision: 7, Entries: entries[:1]},
		},
		{
			name: "empty",
			give: api.ListPage[models.IPCacheEntry]{Fields: []api.Field{{Name: "revision", Value: uint64(0)}},
				ItemsName: "entries", Items: slices.Values([]models.IPCacheEntry(nil))},
			want: models.IPCache{Entries: []models.IPCacheEntry{}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, want := httptest.NewRecorder(), httptest.NewRecorder()
			api.WriteList(got, tt.give)
			api.WriteJSON(want, http.StatusOK, tt.want)
			if got.Body.String() != want.Body.String() {
				t.Errorf("WriteList wrote\n%s\nwant (WriteJSON)\n%s", got.Body, want.Body)
			}
			if got.Code != http.StatusOK || got.Header().Get("Content-Type") != "application/json" {
				t.Errorf("status %d, Content-Type %q", got.Code, got.Header().Get("Content-Type"))
			}
		})
	}
	t.Run("without fields", func(t *testing.T) {
		got, want := httptest.NewRecorder(), httptest.NewRecorder()
		ids := []models.Identity{{ID: 1, Labels: []string{"reserved:host"}, Scope: "reserved"}}
		api.WriteList(got, api.ListPage[models.Identity]{ItemsName: "items", Items: slices.Values(ids), Continue: "t"})
		api.WriteJSON(want, http.StatusOK, models.IdentityList{Items: ids, Continue: "t"})
		if got.Body.String() != want.Body.String() {
			t.Errorf("WriteList wrote\n%s\nwant\n%s", got.Body, want.Body)
		}
	})
}

func TestParseListQuery(t *testing.T) {
	token := api.ContinueToken("ipcache", "10.0.0.1/32")
	tests := []struct {
		name    string
		query   string
		want    api.ListQuery
		wantErr string
	}{
		{name: "defaults", want: api.ListQuery{Limit: models.DefaultListLimit}},
		{name: "limit", query: "limit=5", want: api.ListQuery{Limit: 5}},
		{name: "limit over the maximum", query: "limit=99999999", want: api.ListQuery{Limit: models.MaxListLimit}},
		{name: "continue", query: "continue=" + token, want: api.ListQuery{Limit: models.DefaultListLimit, After: "10.0.0.1/32"}},
		{name: "zero limit", query: "limit=0", wantErr: `query parameter limit: "0" is not a positive integer`},
		{name: "word limit", query: "limit=ten", wantErr: `query parameter limit: "ten" is not a positive integer`},
		{name: "garbage token", query: "continue=%25%25", wantErr: "query parameter continue: not a continue token of this list"},
		{name: "token of another list", query: "continue=" + api.ContinueToken("node", "x"),
			wantErr: "query parameter continue: not a continue token of this list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/v1/ipcache?"+tt.query, nil)
			got, err := api.ParseListQuery(r, "ipcache")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseListQuery = %+v, %v, want %+v", got, err, tt.want)
			}
		})
	}
}
