package cli

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/api/models"
)

// TestStreamTableIsTabwriter checks that a table printed in one page is
// what text/tabwriter (newTable) prints.
func TestStreamTableIsTabwriter(t *testing.T) {
	tests := []struct {
		name string
		rows [][]string
	}{
		{name: "identities", rows: [][]string{{"ID", "LABELS"}, {"1", "reserved:host"}, {"16777217", "cidr:0.0.0.0/0"}, {"", "reserved:world"}}},
		{name: "empty cells", rows: [][]string{{"Name", "IPv4", "CIDR", "IPv6"}, {"node-a", "192.0.2.10", "", ""}, {"c2/node-b", "", "", "fd00::1"}}},
		{name: "wide runes", rows: [][]string{{"K", "V"}, {"schlüssel", "wert"}, {"k", "v"}}},
		{name: "one column", rows: [][]string{{"a => 1"}, {"bb => 2"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want, got bytes.Buffer
			tw := newTable(&want)
			for _, r := range tt.rows {
				fmt.Fprintln(tw, strings.Join(r, "\t"))
			}
			tw.Flush()
			(&streamTable{w: &got}).page(tt.rows)
			if got.String() != want.String() {
				t.Errorf("streamTable printed\n%q\nwant (tabwriter)\n%q", got.String(), want.String())
			}
		})
	}
}

// TestStreamTableKeepsWidths checks that a later page is aligned with the
// earlier ones when its cells are narrower, and widens when they are
// wider.
func TestStreamTableKeepsWidths(t *testing.T) {
	var got bytes.Buffer
	tb := &streamTable{w: &got, trim: true}
	tb.page([][]string{{"IP", "ID", "POD"}, {"10.0.0.1/32", "256", "a"}})
	tb.page([][]string{{"1.1.1.1/32", "2", ""}})
	tb.page([][]string{{"fd00::1234:5678/128", "3", "b"}})
	want := "IP            ID    POD\n" +
		"10.0.0.1/32   256   a\n" +
		"1.1.1.1/32    2\n" +
		"fd00::1234:5678/128   3     b\n"
	if got.String() != want {
		t.Errorf("pages printed\n%s\nwant\n%s", got.String(), want)
	}
}

// TestJSONStreamIsPrintJSON checks that items streamed page by page print
// what printJSON prints for the whole list.
func TestJSONStreamIsPrintJSON(t *testing.T) {
	ids := []models.Identity{
		{ID: 1, Labels: []string{"reserved:host"}, Scope: "reserved"},
		{ID: 256, Labels: []string{"k8s:app=<web>"}, Scope: "global"},
		{ID: 257, Labels: []string{}, Scope: "global"},
	}
	pages := [][]models.Identity{ids[:2], nil, ids[2:]}
	tests := []struct {
		name   string
		fields []jsonField
		pages  [][]models.Identity
		want   any
	}{
		{name: "array", pages: pages, want: ids},
		{name: "empty array", pages: [][]models.Identity{nil}, want: []models.Identity{}},
		{name: "object", fields: []jsonField{{"revision", uint64(9)}}, pages: pages,
			want: struct {
				Revision uint64            `json:"revision"`
				Items    []models.Identity `json:"entries"`
			}{9, ids}},
		{name: "empty object", fields: []jsonField{{"revision", uint64(0)}}, pages: [][]models.Identity{nil},
			want: struct {
				Revision uint64            `json:"revision"`
				Items    []models.Identity `json:"entries"`
			}{0, []models.Identity{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got, want bytes.Buffer
			s := &jsonStream{w: &got, fields: tt.fields, itemsKey: "entries"}
			for _, p := range tt.pages {
				var items []any
				for _, id := range p {
					items = append(items, id)
				}
				s.items(items)
			}
			if err := s.end(); err != nil {
				t.Fatal(err)
			}
			if err := printJSON(&want, tt.want); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("streamed\n%s\nwant (printJSON)\n%s", got.String(), want.String())
			}
		})
	}
}
