package celltest

import (
	"os"
	"path/filepath"
	"testing"
)

// ReplaceFile replaces the file at path with content the way deployment
// tools and users must (and the agent's file watchers expect): a new
// file, hidden in the same directory, renamed over it, so that a
// watcher never reads it half-written and a directory scan never takes
// the new file for one of its own.
func ReplaceFile(t testing.TB, path, content string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
