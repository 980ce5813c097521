package configmap_test

import (
	"encoding/binary"
	"io"
	"log/slog"
	"testing"

	"github.com/apiary-net/apiary/bpf"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	"github.com/apiary-net/apiary/datapath/maps/configmap"
)

func TestLayoutMatchesPrograms(t *testing.T) {
	if a, b := binary.Size(configmap.Value{}), binary.Size(bpf.LxcConfigValue{}); a != b {
		t.Errorf("Value is %d bytes, struct config_value %d", a, b)
	}
}

// TestSetFlag sets and clears a flag, leaving others alone. (What the
// programs do with it is tested in datapath/loader.)
func TestSetFlag(t *testing.T) {
	m, err := configmap.Open(slog.New(slog.NewTextHandler(io.Discard, nil)), bpfmaptest.Root(t))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	const other = 0x4
	steps := []struct {
		flag uint32
		on   bool
		want uint32
	}{
		{configmap.FlagVerdictEvents, true, configmap.FlagVerdictEvents},
		{other, true, configmap.FlagVerdictEvents | other},
		{configmap.FlagVerdictEvents, true, configmap.FlagVerdictEvents | other},
		{configmap.FlagVerdictEvents, false, other},
	}
	for i, s := range steps {
		if err := m.SetFlag(s.flag, s.on); err != nil {
			t.Fatal(err)
		}
		if got, err := m.Flags(); err != nil || got != s.want {
			t.Errorf("step %d: flags %#x, %v; want %#x", i, got, err, s.want)
		}
	}
}

// TestIPCacheRevision: bumps count up and SetFlag leaves the revision
// alone.
func TestIPCacheRevision(t *testing.T) {
	m, err := configmap.Open(slog.New(slog.NewTextHandler(io.Discard, nil)), bpfmaptest.Root(t))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, want := range []uint32{1, 2} {
		if got, err := m.BumpIPCacheRevision(); err != nil || got != want {
			t.Fatalf("bump: %d, %v; want %d", got, err, want)
		}
	}
	if err := m.SetFlag(configmap.FlagVerdictEvents, true); err != nil {
		t.Fatal(err)
	}
	if got, err := m.IPCacheRevision(); err != nil || got != 2 {
		t.Errorf("revision after SetFlag: %d, %v; want 2", got, err)
	}
}
