package bpfapi

import (
	"slices"
	"strings"

	"github.com/apiary-net/apiary/cells/api"
)

// keyed is a list item with its sort key: fixed-width hex of the map
// key's fields, so that the order of the strings is the numeric order
// of the fields, and a continue token is the last key of a page.
type keyed[T any] struct {
	key  string
	item T
}

// page sorts items and returns those after q.After, at most q.Limit of
// them, and the continue token when more follow.
func page[T any](kind string, items []keyed[T], q api.ListQuery) ([]T, string) {
	slices.SortFunc(items, func(a, b keyed[T]) int { return strings.Compare(a.key, b.key) })
	start := 0
	if q.After != "" {
		start, _ = slices.BinarySearchFunc(items, q.After, func(e keyed[T], after string) int {
			if e.key <= after {
				return -1
			}
			return 1
		})
	}
	end := min(start+q.Limit, len(items))
	out := make([]T, 0, end-start)
	for _, e := range items[start:end] {
		out = append(out, e.item)
	}
	var cont string
	if end < len(items) {
		cont = api.ContinueToken(kind, items[end-1].key)
	}
	return out, cont
}
