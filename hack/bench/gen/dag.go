package main

import (
	"math/rand/v2"
	"slices"
)

// maxDeps is the most earlier nodes one node depends on.
const maxDeps = 3

// dag is a dependency graph whose node i depends only on nodes < i.
type dag struct {
	// deps[i] lists the nodes node i depends on, ascending.
	deps [][]int
}

// newDAG builds an n-node graph in which every node depends on 0 to
// maxDeps distinct earlier nodes, chosen by a PCG generator seeded with
// seed: the same n and seed always give the same graph.
func newDAG(n int, seed uint64) dag {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	g := dag{deps: make([][]int, n)}
	for i := range n {
		k := min(r.IntN(maxDeps+1), i)
		picked := make([]int, 0, k)
		for len(picked) < k {
			d := r.IntN(i)
			if !slices.Contains(picked, d) {
				picked = append(picked, d)
			}
		}
		slices.Sort(picked)
		g.deps[i] = picked
	}
	return g
}

// leaves returns the nodes no other node depends on, ascending. Invoking
// them pulls in every node.
func (g dag) leaves() []int {
	used := make([]bool, len(g.deps))
	for _, ds := range g.deps {
		for _, d := range ds {
			used[d] = true
		}
	}
	var out []int
	for i, u := range used {
		if !u {
			out = append(out, i)
		}
	}
	return out
}
