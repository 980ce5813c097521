package bpfsim_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/policy/simulate"
)

// TestTestdataScenariosAgree runs every scenario of policy/testdata
// through the programs: each query's verdict, and each direction's, is
// the engine's.
func TestTestdataScenariosAgree(t *testing.T) {
	files, err := filepath.Glob("../../policy/testdata/scenarios/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios found (%v)", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sim, err := simulate.Load(file, data)
			if err != nil {
				t.Fatal(err)
			}
			engine, kernel := runBoth(t, sim)
			if len(kernel) == 0 {
				t.Fatal("the scenario has no queries")
			}
			if diff := differences(engine, kernel); len(diff) > 0 {
				t.Errorf("kernel and engine differ on %d of %d queries:\n%s", len(diff), len(engine), strings.Join(diff, "\n"))
			}
		})
	}
}
