package bpfmap

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// SysFSBPF is the kernel's conventional bpffs mount point.
const SysFSBPF = "/sys/fs/bpf"

// EnsureRoot creates root and mounts a bpffs on it unless it already is on
// one, so that maps and links can be pinned there. A root directly under
// /sys/fs/bpf (the default) gets a bpffs mounted on /sys/fs/bpf first when
// none is (sysfs refuses the directory otherwise), as Cilium does.
func EnsureRoot(root string) error {
	if filepath.Dir(filepath.Clean(root)) == SysFSBPF {
		if err := ensureSysFSBPF(); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return fmt.Errorf("create bpf root: %w", err)
	}
	onBPFFS, err := IsBPFFS(root)
	if err != nil {
		return err
	}
	if onBPFFS {
		return nil
	}
	if err := unix.Mount("bpffs", root, "bpf", 0, "mode=0700"); err != nil {
		return fmt.Errorf("mount bpffs on %s: %w", root, err)
	}
	return nil
}

// ensureSysFSBPF mounts a bpffs on /sys/fs/bpf unless one is there.
func ensureSysFSBPF() error {
	onBPFFS, err := IsBPFFS(SysFSBPF)
	if err != nil || onBPFFS {
		// A missing /sys/fs/bpf: MkdirAll reports it.
		return nil
	}
	if err := unix.Mount("bpffs", SysFSBPF, "bpf", 0, ""); err != nil {
		return fmt.Errorf("mount bpffs on %s: %w", SysFSBPF, err)
	}
	return nil
}

// IsBPFFS reports whether path is on a bpf filesystem.
func IsBPFFS(path string) (bool, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return false, fmt.Errorf("statfs %s: %w", path, err)
	}
	return st.Type == unix.BPF_FS_MAGIC, nil
}

// OpenOrCreate opens the map pinned at path when it is compatible with
// spec, and otherwise creates a map from spec and pins it at path. An
// incompatible pinned map (a new agent version changed the layout) is
// replaced; the replacement is logged, as the old content is lost.
func OpenOrCreate(log *slog.Logger, spec *ebpf.MapSpec, path string) (*ebpf.Map, error) {
	m, err := ebpf.LoadPinnedMap(path, nil)
	switch {
	case err == nil:
		cerr := spec.Compatible(m)
		if cerr == nil {
			return m, nil
		}
		m.Close()
		log.Warn("Pinned BPF map is incompatible with this agent, recreating it",
			"path", path, "reason", cerr)
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("remove incompatible pinned map: %w", err)
		}
	case !errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("open pinned map %s: %w", path, err)
	}
	spec = spec.Copy()
	spec.Pinning = ebpf.PinNone
	m, err = ebpf.NewMap(spec)
	if err != nil {
		return nil, fmt.Errorf("create map %s: %w", spec.Name, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		m.Close()
		return nil, fmt.Errorf("create pin directory: %w", err)
	}
	if err := m.Pin(path); err != nil {
		m.Close()
		return nil, fmt.Errorf("pin map %s: %w", spec.Name, err)
	}
	return m, nil
}

// OpenShared opens or creates the shared map name of the endpoint programs
// pinned at <root>/<name>.
func OpenShared(log *slog.Logger, root, name string) (*ebpf.Map, error) {
	spec, err := MapSpec(name)
	if err != nil {
		return nil, err
	}
	return OpenOrCreate(log, spec, filepath.Join(root, name))
}
