package cell

import (
	"fmt"
	"io"
	"reflect"
	"runtime"
	"strings"

	"go.uber.org/dig"
)

// InfoNode is one node of the description hive.Print writes: a header, a
// few detail lines and children. A node without a header is transparent:
// its children are printed at its own level.
type InfoNode struct {
	Header   string
	Lines    []string
	Children []*InfoNode
}

// Write prints the node and its children, indented by level.
func (n *InfoNode) Write(w io.Writer, level int) {
	if n == nil {
		return
	}
	if n.Header == "" {
		for _, c := range n.Children {
			c.Write(w, level)
		}
		return
	}
	indent := strings.Repeat("  ", level)
	fmt.Fprintf(w, "%s%s\n", indent, n.Header)
	for _, l := range n.Lines {
		fmt.Fprintf(w, "%s    %s\n", indent, l)
	}
	for _, c := range n.Children {
		c.Write(w, level+1)
	}
}

// FuncName returns the short name of a function: "api.newServer",
// "job.(*group).start".
func FuncName(fn any) string {
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Func {
		return fmt.Sprintf("%T", fn)
	}
	f := runtime.FuncForPC(v.Pointer())
	if f == nil {
		return v.Type().String()
	}
	name := f.Name()
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	return strings.TrimSuffix(name, "-fm")
}

var (
	inType    = reflect.TypeFor[dig.In]()
	outType   = reflect.TypeFor[dig.Out]()
	errorType = reflect.TypeFor[error]()
)

// FuncSignature lists the types a constructor or invoke function takes and
// returns, with cell.In and cell.Out structs expanded into their fields.
func FuncSignature(fn any) (ins, outs []string) {
	t := reflect.TypeOf(fn)
	if t == nil || t.Kind() != reflect.Func {
		return nil, nil
	}
	for i := range t.NumIn() {
		ins = append(ins, expandStruct(t.In(i), inType)...)
	}
	for i := range t.NumOut() {
		if t.Out(i) == errorType {
			continue
		}
		outs = append(outs, expandStruct(t.Out(i), outType)...)
	}
	return ins, outs
}

func expandStruct(t reflect.Type, marker reflect.Type) []string {
	if t.Kind() != reflect.Struct || !embeds(t, marker) {
		return []string{t.String()}
	}
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type == marker || !f.IsExported() {
			continue
		}
		if embeds(f.Type, marker) {
			out = append(out, expandStruct(f.Type, marker)...)
			continue
		}
		desc := f.Type.String()
		var tags []string
		for _, tag := range []string{"group", "name", "optional"} {
			if v, ok := f.Tag.Lookup(tag); ok {
				tags = append(tags, tag+"="+v)
			}
		}
		if len(tags) > 0 {
			desc += " [" + strings.Join(tags, ", ") + "]"
		}
		out = append(out, desc)
	}
	return out
}

func embeds(t, marker reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	for i := range t.NumField() {
		if f := t.Field(i); f.Anonymous && f.Type == marker {
			return true
		}
	}
	return false
}

func checkFunc(fn any) error {
	if t := reflect.TypeOf(fn); t == nil || t.Kind() != reflect.Func {
		return fmt.Errorf("%T is not a function", fn)
	}
	return nil
}

func joinOrNone(xs []string) string {
	if len(xs) == 0 {
		return "(nothing)"
	}
	return strings.Join(xs, ", ")
}
