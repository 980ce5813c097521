package celltest

import (
	"context"
	"log/slog"
	"testing"

	"github.com/spf13/pflag"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/hive"
	"github.com/apiary-net/apiary/cells/stdhive"
)

// New builds and populates a hive of cells with a logger that writes to
// the test log. Flags are given as "name=value" (without dashes).
func New(t testing.TB, flags []string, cells ...cell.Cell) *hive.Hive {
	t.Helper()
	h := NewHive(t, cells...)
	if err := SetFlags(h.Flags(), flags); err != nil {
		t.Fatalf("celltest: %v", err)
	}
	if err := h.Populate(); err != nil {
		t.Fatalf("celltest: populate: %v", err)
	}
	return h
}

// Populate builds a hive of cells with flags set and returns Populate's
// error, for tests of bad input.
func Populate(t testing.TB, flags []string, cells ...cell.Cell) (*hive.Hive, error) {
	t.Helper()
	h := NewHive(t, cells...)
	if err := SetFlags(h.Flags(), flags); err != nil {
		return h, err
	}
	return h, h.Populate()
}

// NewHive builds a hive of cells with the test logger, without
// populating it. It is built as the agent's is (stdhive.New): every
// module gets a job.Group and a controller.Manager. Add controller.Cell
// to the cells when a cell uses controllers.
func NewHive(t testing.TB, cells ...cell.Cell) *hive.Hive {
	return stdhive.New(hive.Options{Logger: Logger(t)}, cells...)
}

// Start builds, populates and starts a hive of cells; it is stopped when
// the test ends (a failing stop fails the test).
func Start(t testing.TB, cells ...cell.Cell) *hive.Hive {
	t.Helper()
	return StartWithFlags(t, nil, cells...)
}

// StartWithFlags is Start with flag values ("name=value").
func StartWithFlags(t testing.TB, flags []string, cells ...cell.Cell) *hive.Hive {
	t.Helper()
	h := New(t, flags, cells...)
	if err := h.Start(context.Background()); err != nil {
		t.Fatalf("celltest: start: %v", err)
	}
	t.Cleanup(func() {
		if err := h.Stop(context.Background()); err != nil {
			t.Errorf("celltest: stop: %v", err)
		}
	})
	return h
}

// SetFlags sets "name=value" pairs on fs as if given on the command line.
func SetFlags(fs *pflag.FlagSet, flags []string) error {
	args := make([]string, 0, len(flags))
	for _, f := range flags {
		args = append(args, "--"+f)
	}
	return fs.Parse(args)
}

// Capture returns a cell that stores the hive's *T in ptr at populate.
func Capture[T any](ptr *T) cell.Cell {
	return cell.Invoke(func(v T) { *ptr = v })
}

// Override returns a cell that changes the parsed config T before it is
// validated and handed to the cells.
func Override[T cell.Flagger](fn func(*T)) cell.Cell {
	return cell.ConfigOverride(fn)
}

// Logger returns a logger that writes to the test's output at debug
// level (shown for failing tests and with -v).
func Logger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}
