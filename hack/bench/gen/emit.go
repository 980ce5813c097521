package main

import (
	"bytes"
	"fmt"
	"go/format"
	"text/template"
)

// node is one node of the graph as the templates see it.
type node struct {
	Index int
	Num   string   // "005"
	Name  string   // "T005"
	Deps  []string // type names, ascending
}

// model is what the templates render.
type model struct {
	N      int
	Seed   uint64
	Nodes  []node
	Leaves []string
}

func newModel(g dag, seed uint64) model {
	m := model{N: len(g.deps), Seed: seed}
	for i, ds := range g.deps {
		n := node{Index: i, Num: fmt.Sprintf("%03d", i), Name: typeName(i)}
		for _, d := range ds {
			n.Deps = append(n.Deps, typeName(d))
		}
		m.Nodes = append(m.Nodes, n)
	}
	for _, l := range g.leaves() {
		m.Leaves = append(m.Leaves, typeName(l))
	}
	return m
}

func typeName(i int) string { return fmt.Sprintf("T%03d", i) }

// files maps each generated file name to its template.
var files = map[string]*template.Template{
	"types_gen.go":  template.Must(template.New("types").Parse(typesTemplate)),
	"hive_gen.go":   template.Must(template.New("hive").Parse(hiveTemplate)),
	"fx_gen.go":     template.Must(template.New("fx").Parse(fxTemplate)),
	"cilium_gen.go": template.Must(template.New("cilium").Parse(ciliumTemplate)),
}

// generate renders the n-node graph for seed into gofmt'ed files, keyed
// by file name.
func generate(n int, seed uint64) (map[string][]byte, error) {
	m := newModel(newDAG(n, seed), seed)
	out := make(map[string][]byte, len(files))
	for name, tmpl := range files {
		var buf bytes.Buffer
		if err := tmpl.Execute(&buf, m); err != nil {
			return nil, fmt.Errorf("render %s: %w", name, err)
		}
		src, err := format.Source(buf.Bytes())
		if err != nil {
			return nil, fmt.Errorf("format %s: %w", name, err)
		}
		out[name] = src
	}
	return out, nil
}
