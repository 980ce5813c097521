package api

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strconv"
	"strings"

	"github.com/apiary-net/apiary/cells/api/models"
)

// ListQuery is the paging of a list request: ?limit=<n>&continue=<token>.
type ListQuery struct {
	// Limit is the page size: models.DefaultListLimit when not given,
	// never more than models.MaxListLimit.
	Limit int
	// After is the key of the last item of the previous page, decoded
	// from the continue token; empty for the first page.
	After string
}

// ParseListQuery reads ?limit= and ?continue= of a request to the list
// named kind ("ipcache", "identity", ...). A token of another list is an
// error, as is a limit that is not a positive integer; both name the
// parameter.
func ParseListQuery(r *http.Request, kind string) (ListQuery, error) {
	q := r.URL.Query()
	out := ListQuery{Limit: models.DefaultListLimit}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return ListQuery{}, fmt.Errorf("query parameter limit: %q is not a positive integer", s)
		}
		out.Limit = min(n, models.MaxListLimit)
	}
	if s := q.Get("continue"); s != "" {
		after, err := decodeContinue(kind, s)
		if err != nil {
			return ListQuery{}, fmt.Errorf("query parameter continue: %w", err)
		}
		out.After = after
	}
	return out, nil
}

// ContinueToken returns the opaque token that asks the list named kind
// for the items after key.
func ContinueToken(kind, key string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + ":" + key))
}

// errBadToken says that a continue token was not made by this agent.
var errBadToken = errors.New("not a continue token of this list (pass the token of the previous answer as is)")

func decodeContinue(kind, token string) (string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return "", errBadToken
	}
	key, ok := strings.CutPrefix(string(raw), kind+":")
	if !ok || key == "" {
		return "", errBadToken
	}
	return key, nil
}

// ListPage is one page of a list answer: the JSON object
//
//	{<Fields...>, "<ItemsName>": [<Items...>], "continue": "<Continue>"}
//
// with "continue" left out when empty.
type ListPage[T any] struct {
	// Fields are written before the items, in order.
	Fields []Field
	// ItemsName is the name of the items' array ("items").
	ItemsName string
	// Items are encoded one at a time.
	Items iter.Seq[T]
	// Continue is the token of the next page, or empty on the last one.
	Continue string
}

// Field is one member of a JSON object.
type Field struct {
	Name  string
	Value any
}

// WriteList answers 200 with a page of a list, encoded item by item as
// the items come, so that the answer is never held in memory whole. The
// body is what WriteJSON writes for the equivalent struct (indented).
// It stops at the first failed write (the client went away or the write
// timeout passed).
func WriteList[T any](w http.ResponseWriter, page ListPage[T]) {
	lw := listWriter{w: w}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	lw.raw("{")
	for _, f := range page.Fields {
		lw.member(f.Name)
		lw.value(f.Value, "  ")
		lw.raw(",")
	}
	lw.member(page.ItemsName)
	n := 0
	for item := range page.Items {
		if n == 0 {
			lw.raw("[\n    ")
		} else {
			lw.raw(",\n    ")
		}
		lw.value(item, "    ")
		n++
		if lw.err != nil {
			return
		}
	}
	if n == 0 {
		lw.raw("[]")
	} else {
		lw.raw("\n  ]")
	}
	if page.Continue != "" {
		lw.raw(",")
		lw.member("continue")
		lw.value(page.Continue, "  ")
	}
	lw.raw("\n}\n")
}

// listWriter writes JSON pieces, keeping the first error.
type listWriter struct {
	w   http.ResponseWriter
	buf bytes.Buffer
	enc *json.Encoder
	err error
}

func (lw *listWriter) raw(s string) {
	if lw.err == nil {
		_, lw.err = lw.w.Write([]byte(s))
	}
}

// member starts an object member on a new line.
func (lw *listWriter) member(name string) {
	lw.raw("\n  ")
	lw.value(name, "  ")
	lw.raw(": ")
}

// value writes v indented as a member at depth prefix.
func (lw *listWriter) value(v any, prefix string) {
	if lw.err != nil {
		return
	}
	if lw.enc == nil {
		lw.enc = json.NewEncoder(&lw.buf)
		lw.enc.SetEscapeHTML(true)
	}
	lw.buf.Reset()
	lw.enc.SetIndent(prefix, "  ")
	if lw.err = lw.enc.Encode(v); lw.err != nil {
		return
	}
	_, lw.err = lw.w.Write(bytes.TrimSuffix(lw.buf.Bytes(), []byte("\n")))
}
