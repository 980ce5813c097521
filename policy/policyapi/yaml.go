package policyapi

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	// go.yaml.in/yaml/v2, where the rest of apiary reads YAML with
	// go.yaml.in/yaml/v3: v2 is the decoder sigs.k8s.io/yaml runs for
	// kubectl, the API server and Cilium, so a policy file parses here as
	// it does there (YAML 1.1 scalars such as yes/no and 0777, duplicate
	// keys rejected, the same line-numbered errors). It is called
	// directly rather than through sigs.k8s.io/yaml so that the budget
	// bounds what aliases expand to while converting, before the
	// YAML-to-JSON step would copy it.
	"go.yaml.in/yaml/v2"
)

// yamlDocument is one document of a multi-document input.
type yamlDocument struct {
	data []byte
	// line is the input line the document starts on, 1-based.
	line int
	// err is a malformed separator before the document.
	err error
}

// splitYAML splits data into documents at separator lines, as kubectl
// does: a line that starts with "---" followed by nothing but spaces or a
// comment. Any other text after "---" is an error of the next document,
// rather than a document the YAML decoder would silently drop.
func splitYAML(data []byte) []yamlDocument {
	docs := []yamlDocument{{line: 1}}
	lines := bytes.SplitAfter(data, []byte("\n"))
	for i, line := range lines {
		if !bytes.HasPrefix(line, []byte("---")) {
			cur := &docs[len(docs)-1]
			cur.data = append(cur.data, line...)
			continue
		}
		next := yamlDocument{line: i + 2}
		rest := strings.TrimSpace(string(line[3:]))
		if rest != "" && !strings.HasPrefix(rest, "#") {
			next.err = fmt.Errorf("invalid document separator on line %d: only a comment may follow ---", i+1)
		}
		docs = append(docs, next)
	}
	return docs
}

// decodeYAML decodes one document, YAML or JSON, into generic values the
// way Kubernetes does (sigs.k8s.io/yaml: go.yaml.in/yaml/v2, YAML 1.1
// scalars, duplicate keys rejected, then JSON), with numbers kept as
// json.Number, counting its decoded size against the budget. An empty
// document (only comments, or null) decodes to nil.
//
// The YAML decoder bounds the number of values aliases expand to, not
// their bytes; the budget bounds the bytes while converting, before
// anything is copied.
func decodeYAML(doc yamlDocument, budget *sizeBudget) (any, error) {
	if doc.err != nil {
		return nil, doc.err
	}
	if len(bytes.TrimSpace(doc.data)) == 0 {
		return nil, nil
	}
	var y any
	if err := yaml.UnmarshalStrict(doc.data, &y); err != nil {
		return nil, fmt.Errorf("invalid YAML: %s", relocateLines(err.Error(), doc.line))
	}
	v, err := budget.convert(y)
	switch {
	case err == nil:
		return v, nil
	case errors.Is(err, ErrTooLarge) || budget.ctx.Err() != nil:
		return nil, err
	}
	return nil, fmt.Errorf("invalid YAML: %w", err)
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// relocateLines turns the document-relative line numbers of a YAML error
// into input line numbers.
func relocateLines(msg string, start int) string {
	return yamlLine.ReplaceAllStringFunc(msg, func(s string) string {
		n, err := strconv.Atoi(s[len("line "):])
		if err != nil {
			return s
		}
		return "line " + strconv.Itoa(n+start-1)
	})
}
