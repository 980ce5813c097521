package svcmanagercell

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/safefile"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/datapath/svcmanager"
)

// fileQuietPeriod is how long the directory must be quiet before the
// file is read again (one write or one swap is several events).
const fileQuietPeriod = 100 * time.Millisecond

// fileSource feeds the manager from --lb-state-file. It watches the
// file's directory, so it follows a file replaced by rename and a
// ConfigMap mount's symlink swap, and reads the file again on any event,
// applying it only when its content changed. A file that cannot be read
// or is refused leaves the services of the last good content.
type fileSource struct {
	path    string
	manager *svcmanager.Manager
	log     *slog.Logger
	status  status.Refresher
	trigger *job.Trigger
	loaded  chan struct{} // closed after the first read, good or not
	once    sync.Once

	mu       sync.Mutex
	sum      [sha256.Size]byte
	applied  bool
	services int
	lastErr  error
}

type fileParams struct {
	cell.In

	Config  Config
	Manager *svcmanager.Manager
	Log     *slog.Logger
	Status  status.Refresher `optional:"true"`
}

func newFileSource(p fileParams) *fileSource {
	f := &fileSource{path: p.Config.LBStateFile, manager: p.Manager, log: p.Log, status: p.Status, loaded: make(chan struct{})}
	f.trigger = job.NewTrigger("lb-state-file-read", func(ctx context.Context, _ []string) error {
		f.read(ctx)
		return nil
	}, job.TriggerParams{After: fileQuietPeriod, Max: time.Second})
	return f
}

func (f *fileSource) enabled() bool { return f.path != "" }

// StateFile tells when the services of --lb-state-file are in the
// manager: the publisher of this cluster's global services
// (clustermesh/service/svcpublish) waits for it before it deletes the
// keys of services that are gone.
type StateFile interface {
	// WaitRead returns once the file was read the first time, good or
	// not (at once without --lb-state-file), or with ctx's error.
	WaitRead(ctx context.Context) error
}

var _ StateFile = (*fileSource)(nil)

// WaitRead waits for the first read of the file.
func (f *fileSource) WaitRead(ctx context.Context) error {
	if !f.enabled() {
		return nil
	}
	select {
	case <-f.loaded:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// watch reads the file once, then again on every change of its
// directory, until ctx ends.
func (f *fileSource) watch(ctx context.Context, _ cell.Health) error {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch --lb-state-file: %w", err)
	}
	defer fw.Close()
	if err := fw.Add(filepath.Dir(f.path)); err != nil {
		f.fail(fmt.Errorf("watch the directory of %s: %w", f.path, err))
	} else {
		defer fw.Remove(filepath.Dir(f.path))
	}
	f.read(ctx)
	for {
		select {
		case <-fw.Events:
			f.trigger.Trigger("lb-state-file changed")
		case err := <-fw.Errors:
			f.log.Warn("Error watching --lb-state-file", "file", f.path, "error", err)
			f.trigger.Trigger("watch error")
		case <-ctx.Done():
			return nil
		}
	}
}

// read reads and applies the file when its content changed.
func (f *fileSource) read(ctx context.Context) {
	defer f.once.Do(func() { close(f.loaded) })
	data, err := readFile(ctx, f.path)
	if err != nil {
		f.fail(err)
		return
	}
	sum := sha256.Sum256(data)
	f.mu.Lock()
	same := f.applied && sum == f.sum && f.lastErr == nil
	f.mu.Unlock()
	if same {
		return
	}
	svcs, err := svcmanager.ParseStateFile(f.path, data)
	if err != nil {
		f.fail(err)
		return
	}
	f.manager.Replace(svcmanager.SourceFile, svcs)
	f.mu.Lock()
	f.sum, f.applied, f.services, f.lastErr = sum, true, len(svcs), nil
	f.mu.Unlock()
	f.log.Info("Synchronized services from --lb-state-file", "file", f.path, "services", len(svcs))
	refresh(f.status)
}

func (f *fileSource) fail(err error) {
	f.mu.Lock()
	f.lastErr = err
	f.mu.Unlock()
	f.log.Warn("--lb-state-file refused; the services of its last good content stay", "file", f.path, "error", err)
	refresh(f.status)
}

// state returns the number of services in force and the last error.
func (f *fileSource) state() (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.services, f.lastErr
}

// readFile reads the state file as every file the agent is given: a
// regular file, at most 16 MiB, within 10 s.
func readFile(ctx context.Context, path string) ([]byte, error) {
	data, err := safefile.Read(ctx, path, safefile.Limits{})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w (an empty file removes every service)", err)
	}
	return data, err
}
