package policyapi_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/policy/policyapi"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenOptions are those of an agent in cluster1 of a mesh, with the
// default local-cluster selectors.
var goldenOptions = policyapi.Options{ClusterName: "cluster1", DefaultLocalCluster: true, DefaultNamespace: "default"}

// TestGolden parses each example in testdata and compares the translated
// policies, as JSON, with testdata/<example>.golden.json. Run with
// -update after an intended change and review the diff.
func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob("testdata/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	jsonInputs, _ := filepath.Glob("testdata/*[^n].json")
	inputs = append(inputs, jsonInputs...)
	if len(inputs) < 5 {
		t.Fatalf("found %d examples in testdata, want at least 5", len(inputs))
	}
	for _, in := range inputs {
		t.Run(filepath.Base(in), func(t *testing.T) {
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			policies, err := policyapi.ParseDocuments(filepath.Base(in), data, goldenOptions)
			if err != nil {
				t.Fatalf("ParseDocuments: %v", err)
			}
			got, err := json.MarshalIndent(policies, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := strings.TrimSuffix(in, filepath.Ext(in)) + ".golden.json"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGolden -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from %s; got:\n%s", in, golden, got)
			}
		})
	}
}
