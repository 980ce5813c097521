package policyapi

import (
	"errors"
	"fmt"
	"strings"
)

// ErrUnsupported marks a field apiary knows but does not enforce (L7
// rules, toFQDNs, toServices, fromRequires, ...). Such a field rejects its
// document instead of being ignored; test with errors.Is.
var ErrUnsupported = errors.New("not supported")

// FieldError is one problem with one field of a document.
type FieldError struct {
	// Field is the path of the field in the document, in the style of
	// kubectl: "specs[1].ingress[0].toPorts[0].ports[0].port". It is
	// empty for problems with the document as a whole.
	Field string
	// Err says what is wrong; it wraps ErrUnsupported for fields apiary
	// does not enforce.
	Err error
}

// Error formats the error as "field: problem".
func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Err.Error()
	}
	return e.Field + ": " + e.Err.Error()
}

// Unwrap returns the problem.
func (e *FieldError) Unwrap() error { return e.Err }

// DocumentError is a rejected document with every problem found in it.
type DocumentError struct {
	// File names the input, as given to ParseDocuments.
	File string
	// Document is the 1-based position of the document among the
	// non-empty documents of the input.
	Document int
	// Item is the index of the object in a List document, or -1.
	Item int
	// Kind, Namespace and Name identify the object when they could be
	// read.
	Kind      Kind
	Namespace string
	Name      string
	// Errs are the problems, in document order.
	Errs []*FieldError
}

// Error formats one line per problem, each naming the file, document and
// object: `policy.yaml: document 2 (CiliumNetworkPolicy default/allow-db):
// specs[1].ingress[0].toPorts[0].ports[0].port: ...`.
func (e *DocumentError) Error() string {
	prefix := e.prefix()
	lines := make([]string, len(e.Errs))
	for i, fe := range e.Errs {
		lines[i] = prefix + fe.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the problems, for errors.Is and errors.As.
func (e *DocumentError) Unwrap() []error {
	out := make([]error, len(e.Errs))
	for i, fe := range e.Errs {
		out[i] = fe
	}
	return out
}

func (e *DocumentError) prefix() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: document %d", e.File, e.Document)
	if e.Item >= 0 {
		fmt.Fprintf(&b, " items[%d]", e.Item)
	}
	if e.Kind != "" {
		b.WriteString(" (")
		b.WriteString(describeObject(e.Kind, e.Namespace, e.Name))
		b.WriteString(")")
	}
	b.WriteString(": ")
	return b.String()
}

// describeObject is "Kind ns/name", "Kind name" or "Kind".
func describeObject(kind Kind, namespace, name string) string {
	switch {
	case name == "":
		return string(kind)
	case namespace == "":
		return string(kind) + " " + name
	}
	return string(kind) + " " + namespace + "/" + name
}
