package cell_test

import (
	"testing"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/hive"
)

// celltestHive builds an unpopulated hive with flags set, for tests that
// expect Populate to fail.
func celltestHive(t *testing.T, flags []string, cells ...cell.Cell) *hive.Hive {
	t.Helper()
	h := hive.NewWithOptions(hive.Options{Logger: celltest.Logger(t)}, cells...)
	if err := celltest.SetFlags(h.Flags(), flags); err != nil {
		t.Fatal(err)
	}
	return h
}
