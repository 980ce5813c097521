package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	n := flag.Int("n", 200, "number of nodes (cells)")
	seed := flag.Uint64("seed", 1, "seed of the pseudo-random graph")
	out := flag.String("out", ".", "directory to write the generated files to")
	flag.Parse()
	if err := run(*n, *seed, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(n int, seed uint64, dir string) error {
	if n < 1 || n > 1000 {
		return fmt.Errorf("-n %d: want 1 to 1000", n)
	}
	srcs, err := generate(n, seed)
	if err != nil {
		return err
	}
	for name, src := range srcs {
		if err := os.WriteFile(filepath.Join(dir, name), src, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
}
