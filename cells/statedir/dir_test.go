package statedir_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/hive"
	"github.com/apiary-net/apiary/cells/statedir"
	"github.com/apiary-net/apiary/cells/status"
)

func TestCreatesDir(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, path string)
	}{
		{name: "missing parents", setup: func(*testing.T, string) {}},
		{name: "existing with a wider mode", setup: func(t *testing.T, path string) {
			if err := os.MkdirAll(path, 0o777); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, 0o777); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "var", "run", "apiary")
			tt.setup(t, path)
			var d statedir.Dir
			celltest.StartWithFlags(t, []string{"state-dir=" + path}, statedir.Cell, celltest.Capture(&d))
			if d.Path() != path {
				t.Errorf("Path() = %q, want %q", d.Path(), path)
			}
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if !info.IsDir() || info.Mode().Perm() != 0o750 {
				t.Errorf("state dir mode = %v, want a directory with 0750", info.Mode())
			}
		})
	}
}

func TestStartFailsOnAFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var d statedir.Dir
	h := celltest.New(t, []string{"state-dir=" + path}, statedir.Cell, celltest.Capture(&d))
	err := h.Start(t.Context())
	if err == nil || !strings.Contains(err.Error(), "create state dir "+path+": exists and is not a directory") {
		t.Fatalf("Start = %v, want an error saying %s is not a directory", err, path)
	}
}

func TestInvalidStateDir(t *testing.T) {
	tests := []struct {
		name string
		give string
		want string
	}{
		{name: "empty", give: "", want: "--state-dir: must not be empty"},
		{name: "relative", give: "run/apiary", want: `--state-dir: "run/apiary" is not an absolute path`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d statedir.Dir
			h := hive.NewWithOptions(hive.Options{Logger: celltest.Logger(t)}, statedir.Cell, celltest.Capture(&d))
			if err := celltest.SetFlags(h.Flags(), []string{"state-dir=" + tt.give}); err != nil {
				t.Fatal(err)
			}
			if err := h.Populate(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Populate = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func stateDirEntry(t *testing.T, c status.Collector) models.StatusEntry {
	t.Helper()
	for _, e := range c.Status().Entries {
		if e.Name == "State dir" {
			return e
		}
	}
	t.Fatal("no State dir status entry")
	return models.StatusEntry{}
}

func TestStatusProvider(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	synctest.Test(t, func(t *testing.T) {
		var c status.Collector
		celltest.StartWithFlags(t, []string{"state-dir=" + path},
			statedir.Cell, status.Cell, celltest.Capture(&c), cell.Invoke(func(statedir.Dir) {}))
		got := stateDirEntry(t, c)
		want := regexp.MustCompile(`^` + regexp.QuoteMeta(path) + ` \(mode 0750, [0-9.]+ [KMGTPE]?i?B free\)$`)
		if got.State != status.Ok || !want.MatchString(got.Message) {
			t.Errorf("State dir = %+v, want Ok matching %s", got, want)
		}
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		time.Sleep(status.ProbeInterval)
		synctest.Wait()
		got = stateDirEntry(t, c)
		if got.State != status.Failure || !strings.Contains(got.Message, "no such file or directory") {
			t.Errorf("State dir after removal = %+v, want a Failure", got)
		}
	})
}
