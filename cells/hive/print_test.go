package hive_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/hive"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

type store struct{}

type storeParams struct {
	cell.In

	Config    netConfig
	Lifecycle cell.Lifecycle
	Handlers  []string `group:"handlers"`
}

type handlerOut struct {
	cell.Out

	Handler string `group:"handlers"`
}

func newStore(p storeParams) *store {
	p.Lifecycle.Append(cell.Hook{OnStart: startStore, OnStop: stopStore})
	return &store{}
}

func startStore(cell.HookContext) error { return nil }
func stopStore(cell.HookContext) error  { return nil }

func newHandler() handlerOut { return handlerOut{Handler: "/v1/store"} }

func useStore(*store) {}

func printHive() *hive.Hive {
	h := hive.New(
		cell.Module("agent", "The agent",
			cell.Config(defaultNetConfig),
			cell.Module("store", "Key-value store",
				cell.Provide(newStore),
				cell.ProvidePrivate(newHandler),
			),
			cell.Invoke(useStore),
		),
	)
	fs := pflag.NewFlagSet("", pflag.ContinueOnError)
	h.RegisterFlags(fs)
	_ = fs.Parse([]string{"--cluster-name=c1"})
	return h
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestPrintGolden(t *testing.T) {
	var out bytes.Buffer
	if err := printHive().Print(&out); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "print.golden", out.Bytes())
}

func TestPrintDotGolden(t *testing.T) {
	var out bytes.Buffer
	if err := printHive().PrintDot(&out); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "print-dot.golden", out.Bytes())
}
