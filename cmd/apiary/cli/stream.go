package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"unicode/utf8"
)

// columnPadding is the space between table columns.
const columnPadding = 3

// streamTable prints a table a page of rows at a time. Every cell but
// the last of a row is padded to its column's width plus columnPadding;
// a column is as wide as its widest cell so far, so a page is aligned
// with itself and with the pages before (a later, wider cell shifts the
// columns of the lines after it only). A table printed in one page is
// what text/tabwriter prints (minwidth 0, padding 3, padded with
// spaces).
type streamTable struct {
	w      io.Writer
	trim   bool // drop the blanks that empty last cells leave
	widths []int
	err    error
}

// page prints rows.
func (t *streamTable) page(rows [][]string) {
	for _, row := range rows {
		for i, cell := range row[:max(len(row)-1, 0)] {
			if i == len(t.widths) {
				t.widths = append(t.widths, 0)
			}
			t.widths[i] = max(t.widths[i], utf8.RuneCountInString(cell))
		}
	}
	var line strings.Builder
	for _, row := range rows {
		line.Reset()
		for i, cell := range row {
			line.WriteString(cell)
			if i < len(row)-1 {
				line.WriteString(strings.Repeat(" ", t.widths[i]+columnPadding-utf8.RuneCountInString(cell)))
			}
		}
		s := line.String()
		if t.trim {
			s = strings.TrimRight(s, " ")
		}
		t.write(s + "\n")
	}
}

func (t *streamTable) write(s string) {
	if t.err == nil {
		_, t.err = io.WriteString(t.w, s)
	}
}

// jsonField is one member of a JSON object.
type jsonField struct {
	name  string
	value any
}

// jsonStream prints a JSON array, or an object with fields and then an
// array member, item by item as the pages come: the same bytes as
// printJSON of the whole array (or object) once done. An unfinished
// listing (an error on a later page) is left unterminated, so that a
// JSON reader of the output fails rather than take part of a list for
// all of it.
type jsonStream struct {
	w        io.Writer
	fields   []jsonField // when set, an object with these fields first
	itemsKey string      // the array's member name in the object
	started  bool
	n        int
	err      error
}

// indent is the indentation of the array's items.
func (s *jsonStream) indent() string {
	if s.fields != nil {
		return "    "
	}
	return "  "
}

func (s *jsonStream) start() {
	s.started = true
	if s.fields == nil {
		return
	}
	s.write("{")
	for _, f := range s.fields {
		s.write("\n  " + s.encode(f.name, "  ") + ": " + s.encode(f.value, "  ") + ",")
	}
	s.write("\n  " + s.encode(s.itemsKey, "  ") + ": ")
}

// items prints the items of one page.
func (s *jsonStream) items(items []any) {
	if !s.started {
		s.start()
	}
	for _, item := range items {
		sep := ",\n"
		if s.n == 0 {
			sep = "[\n"
		}
		s.write(sep + s.indent() + s.encode(item, s.indent()))
		s.n++
	}
}

// end closes the array (and object).
func (s *jsonStream) end() error {
	if !s.started {
		s.start()
	}
	closing := "\n" + strings.TrimSuffix(s.indent(), "  ") + "]"
	if s.n == 0 {
		closing = "[]"
	}
	if s.fields != nil {
		closing += "\n}"
	}
	s.write(closing + "\n")
	return s.err
}

func (s *jsonStream) encode(v any, prefix string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent(prefix, "  ")
	if err := enc.Encode(v); err != nil && s.err == nil {
		s.err = err
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

func (s *jsonStream) write(str string) {
	if s.err == nil {
		_, s.err = io.WriteString(s.w, str)
	}
}
