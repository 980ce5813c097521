package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// TestGeneratedFilesUpToDate fails when ../graph was edited by hand or the
// generator changed without `go generate ./graph`.
func TestGeneratedFilesUpToDate(t *testing.T) {
	srcs, err := generate(200, 1)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range srcs {
		got, err := os.ReadFile(filepath.Join("..", "graph", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("graph/%s is stale: run `go generate ./graph` in hack/bench", name)
		}
	}
}

func TestDAGShape(t *testing.T) {
	g := newDAG(200, 1)
	sizes := make([]int, maxDeps+1)
	for i, ds := range g.deps {
		if len(ds) > maxDeps {
			t.Fatalf("node %d has %d deps, want at most %d", i, len(ds), maxDeps)
		}
		for j, d := range ds {
			if d >= i || j > 0 && d <= ds[j-1] {
				t.Fatalf("node %d deps %v: want distinct earlier nodes, ascending", i, ds)
			}
		}
		sizes[len(ds)]++
	}
	for k, n := range sizes {
		if n == 0 {
			t.Errorf("no node has %d deps; want every count 0..%d used", k, maxDeps)
		}
	}
	if len(g.leaves()) == 0 || len(g.leaves()) == 200 {
		t.Errorf("%d leaves: want some nodes depended on and some not", len(g.leaves()))
	}
	if other := newDAG(200, 1); !slices.EqualFunc(g.deps, other.deps, slices.Equal[[]int]) {
		t.Error("newDAG(200, 1) differs between calls: want a deterministic graph")
	}
}

// generatedHeader is the line Go tools (go vet, gopls, linguist, review
// tools) take as the mark of a generated file.
var generatedHeader = regexp.MustCompile(`^// Code generated .* DO NOT EDIT\.$`)

// TestGeneratedFilesAreMarked fails when a generated file does not start
// with the standard "Code generated ... DO NOT EDIT." line.
func TestGeneratedFilesAreMarked(t *testing.T) {
	srcs, err := generate(200, 1)
	if err != nil {
		t.Fatal(err)
	}
	for name, src := range srcs {
		first, _, _ := bytes.Cut(src, []byte("\n"))
		if !generatedHeader.Match(first) {
			t.Errorf("%s starts with %q, want the line of generated Go files", name, first)
		}
	}
}
