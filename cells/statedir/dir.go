package statedir

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"syscall"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/status"
)

// Mode is the permission of the state directory.
const Mode fs.FileMode = 0o750

// wOK is access(2)'s W_OK.
const wOK = 2

// Dir is the agent's state directory.
type Dir interface {
	// Path returns the directory's absolute path. It exists once the
	// hive has started.
	Path() string
}

type dir struct {
	path   string
	log    *slog.Logger
	health cell.Health
}

var _ Dir = (*dir)(nil)

type dirParams struct {
	cell.In

	Config    Config
	Lifecycle cell.Lifecycle
	Logger    *slog.Logger
	Health    cell.Health
}

func newDir(p dirParams) Dir {
	d := &dir{path: p.Config.StateDir, log: p.Logger, health: p.Health}
	lc := p.Lifecycle
	lc.Append(cell.Hook{OnStart: d.create}) // the directory outlives the agent: no stop
	return d
}

func (d *dir) Path() string { return d.path }

// create creates the directory, or sets its mode if it exists.
func (d *dir) create(cell.HookContext) error {
	info, err := os.Stat(d.path)
	switch {
	case err == nil && !info.IsDir():
		return fmt.Errorf("create state dir %s: exists and is not a directory", d.path)
	case err == nil && info.Mode().Perm() != Mode:
		d.log.Info("Setting the mode of the state dir", "path", d.path, "from", info.Mode().Perm(), "to", Mode)
	}
	if err := os.MkdirAll(d.path, Mode); err != nil {
		return fmt.Errorf("create state dir: %w", err)
	}
	// MkdirAll is subject to the umask and leaves existing dirs alone.
	if err := os.Chmod(d.path, Mode); err != nil {
		return fmt.Errorf("set mode of state dir: %w", err)
	}
	d.health.OK("using " + d.path)
	return nil
}

// newStatusProvider reports the "State dir" line.
func newStatusProvider(module cell.FullModuleID, d Dir) status.ProviderOut {
	return status.NewProviderOut(module, "State dir", func(context.Context) status.Report {
		return probe(d.Path())
	})
}

func probe(path string) status.Report {
	info, err := os.Stat(path)
	if err != nil {
		return status.Report{State: status.Failure, Message: fmt.Sprintf("%s: %v", path, err)}
	}
	if !info.IsDir() {
		return status.Report{State: status.Failure, Message: path + " is not a directory"}
	}
	if err := syscall.Access(path, wOK); err != nil {
		return status.Report{State: status.Failure, Message: fmt.Sprintf("%s is not writable: %v", path, err)}
	}
	msg := fmt.Sprintf("%s (mode %04o", path, info.Mode().Perm())
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err == nil {
		msg += ", " + formatBytes(st.Bavail*uint64(st.Bsize)) + " free"
	}
	return status.Report{State: status.Ok, Message: msg + ")"}
}

// formatBytes formats a size with a binary unit: "1.5 GiB".
func formatBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
