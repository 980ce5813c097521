package scenariogen

import (
	"fmt"
	"maps"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/apiary-net/apiary/policy/simulate"
)

// File returns the whole scenario as a scenario file for simulate.Load
// and `apiary policy simulate -f`.
func (c *Case) File() []byte {
	return []byte(c.YAML(c.Scenario.Queries))
}

// YAML returns the scenario with its policies and the given queries (a
// scenario's differing ones, say) as a scenario file.
func (c *Case) YAML(queries []simulate.Query) string {
	s := c.Scenario
	s.Queries = queries
	out, err := yaml.Marshal(&s)
	if err != nil {
		panic(fmt.Sprintf("marshal generated scenario: %v", err)) // plain values always marshal
	}
	var b strings.Builder
	b.Write(out)
	b.WriteString("policies:\n")
	for _, p := range c.Policies {
		for i, line := range strings.Split(strings.TrimRight(p, "\n"), "\n") {
			if i == 0 {
				b.WriteString("  - " + line + "\n")
			} else {
				b.WriteString("    " + line + "\n")
			}
		}
	}
	return b.String()
}

// NamespaceLabels returns the labels of namespace ns with
// kubernetes.io/metadata.name, as the API server sets them.
func (c *Case) NamespaceLabels(ns string) map[string]string {
	out := map[string]string{"kubernetes.io/metadata.name": ns}
	for _, n := range c.Scenario.Namespaces {
		if n.Name == ns {
			maps.Copy(out, n.Labels)
		}
	}
	return out
}
