package layout_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// spelled are the prefixes only this package may spell: a writer and a
// reader that each spell one can drift apart without an error.
var spelled = []string{
	"cilium/state/ip/v1",
	"cilium/state/identities/v1",
	"cilium/state/nodes/v1",
	"cilium/state/services/v1",
	"cilium/cluster-config",
	"cilium/synced",
}

// TestSpelledHereOnly fails when a non-test Go file of the module outside
// hack/ and this package spells one of the prefixes, in code or in a
// comment: it must name the layout constant or builder instead.
func TestSpelledHereOnly(t *testing.T) {
	root := filepath.Join("..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found: %v", err)
	}
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			abs, err := filepath.Abs(path)
			if err != nil {
				return err
			}
			rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
			if abs == here || rel == "hack" || strings.HasPrefix(d.Name(), ".") && path != root || d.Name() == "_output" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		files++
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, s := range spelled {
			if strings.Contains(string(data), s) {
				t.Errorf("%s spells %q: use the kvstore/layout constant or builder", path, s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("walked %d Go files, want the whole module", files)
	}
}
