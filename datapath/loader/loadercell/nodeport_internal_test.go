package loadercell

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath/loader"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
)

// TestNodePortUnknownChoiceKeepsLinks: while the devices are not known
// (the start's detection failed), the programs an earlier run left on
// its devices stay; once they are known, those of devices not chosen
// go.
func TestNodePortUnknownChoiceKeepsLinks(t *testing.T) {
	root := bpfmaptest.Root(t)
	l, err := loader.New(celltest.Logger(t), root, 1024)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	left := l.NetdevLinkDir("eth9") // an earlier run's, its links gone with the device
	if err := os.MkdirAll(left, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := nodePort(celltest.Logger(t), l, nil, nil, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(left); err != nil {
		t.Fatalf("with the devices unknown, %s was removed: %v", filepath.Base(left), err)
	}
	if _, err := nodePort(celltest.Logger(t), l, nil, nil, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Fatalf("with no device chosen, %s stays: %v", filepath.Base(left), err)
	}
}
