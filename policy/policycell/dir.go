package policycell

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/safefile"
)

// fileState is what the importer knows of one file of --policy-dir.
type fileState struct {
	sum   [sha256.Size]byte // of the content last read
	rules int               // rules in force from the file
	err   error             // the last content's error; its rules are older
	// skipped says why the file was not read (not a regular file, over
	// the size limit, ...); its rules are older.
	skipped error
}

// fileStates are the files of --policy-dir by name.
type fileStates map[string]fileState

// dirWatcher loads the policy files of a directory and reloads them on
// every change. It watches the directory itself and re-reads every file
// on any event, comparing contents per file, so it also follows files
// that are symlinks swapped atomically (a Kubernetes ConfigMap mount:
// name -> ..data/name, ..data -> ..2026_xx).
type dirWatcher struct {
	dir      string
	importer *importer
	// rescan coalesces the events of one write (truncate, then write)
	// or one swap into one scan.
	rescan *job.Trigger
	mu     sync.Mutex // one scan at a time
}

// dirQuietPeriod is how long the directory must be quiet before a scan.
const dirQuietPeriod = 100 * time.Millisecond

func newDirWatcher(dir string, l *importer) *dirWatcher {
	w := &dirWatcher{dir: dir, importer: l}
	w.rescan = job.NewTrigger("policy-dir-scan", func(ctx context.Context, _ []string) error {
		w.scan(ctx)
		return nil
	}, job.TriggerParams{After: dirQuietPeriod, Max: time.Second})
	return w
}

// start loads the directory once, so the agent starts with its policies.
func (w *dirWatcher) start(ctx cell.HookContext) error {
	fi, err := os.Stat(w.dir) // not ReadDir: opening a named pipe blocks
	switch {
	case err != nil:
		return fmt.Errorf("read --policy-dir: %w", err)
	case !fi.IsDir():
		return fmt.Errorf("read --policy-dir: %s is not a directory", w.dir)
	}
	w.scan(ctx)
	return nil
}

// run watches the directory until ctx ends.
func (w *dirWatcher) run(ctx context.Context, health cell.Health) error {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch %s: %w", w.dir, err)
	}
	defer fw.Close()
	if err := fw.Add(w.dir); err != nil {
		return fmt.Errorf("watch %s: %w", w.dir, err)
	}
	w.scan(ctx) // changes between the start hook and the watch
	health.OK("watching " + w.dir)
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-fw.Events:
			if !ok {
				return nil
			}
			w.rescan.Trigger(filepath.Base(ev.Name))
		case err, ok := <-fw.Errors:
			if !ok {
				return nil
			}
			w.importer.log.Error("Watching --policy-dir", "dir", w.dir, "error", err)
			w.rescan.Trigger("watch error")
		}
	}
}

// policyFile reports whether a directory entry is a policy file: a
// regular file (or a symlink to one) not hidden, named *.yaml, *.yml or
// *.json.
func policyFile(name string) bool {
	if strings.HasPrefix(name, ".") {
		return false
	}
	switch filepath.Ext(name) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// scan reads every policy file and applies those whose content changed;
// files gone have their rules deleted. Only regular files (after
// symlinks) within --policy-max-input-size are read; others are skipped
// with a warning, so that no file can block the scan or fill the memory.
func (w *dirWatcher) scan(ctx context.Context) {
	w.mu.Lock()
	defer w.mu.Unlock()
	entries, err := os.ReadDir(w.dir)
	if err != nil {
		w.importer.log.Error("Reading --policy-dir", "dir", w.dir, "error", err)
		return
	}
	limits := safefile.Limits{MaxSize: w.importer.opts.Limits.MaxInput()}
	seen := map[string]bool{}
	for _, e := range entries {
		if e.IsDir() || !policyFile(e.Name()) {
			continue
		}
		data, err := safefile.Read(ctx, filepath.Join(w.dir, e.Name()), limits)
		switch {
		case ctx.Err() != nil:
			return // stopping
		case errors.Is(err, os.ErrNotExist):
			continue // a dangling symlink in the middle of a swap
		}
		seen[e.Name()] = true
		if err != nil {
			w.skip(e.Name(), err)
			continue
		}
		w.load(ctx, e.Name(), data)
	}
	for _, name := range w.importer.fileNames() {
		if !seen[name] {
			w.remove(ctx, name)
		}
	}
}

// skip records that a file could not be read; it keeps its previous
// rules. The warning is logged when the reason changes.
func (w *dirWatcher) skip(name string, err error) {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the name is said once
	}
	l := w.importer
	prev, _ := l.file(name)
	if prev.skipped == nil || prev.skipped.Error() != err.Error() {
		l.log.Warn("Skipping policy file", "file", name, "reason", err, "previous-rules-kept", prev.rules)
	}
	prev.skipped = err
	l.setFile(name, prev)
}

// load applies one file's content if it changed. A file with an error
// keeps its previous rules.
func (w *dirWatcher) load(ctx context.Context, name string, data []byte) {
	l := w.importer
	prev, known := l.file(name)
	prev.skipped = nil
	sum := sha256.Sum256(data)
	if known && prev.sum == sum {
		l.setFile(name, prev)
		return
	}
	pols, err := l.parse(ctx, name, data)
	if ctx.Err() != nil {
		return // stopping; the next scan parses it again
	}
	if err != nil {
		l.log.Error("Rejecting policy file, keeping its previous rules", "file", name, "error", err)
		prev.sum, prev.err = sum, err
		l.setFile(name, prev)
		return
	}
	rev, _ := l.replaceFile(ctx, name, pols) // CIDR errors are logged and retried at the next change
	rules := 0
	for _, p := range pols {
		rules += len(p.Rules)
	}
	l.log.Info("Loaded policy file", "file", name, "policies", len(pols), "rules", rules, "revision", rev)
	l.setFile(name, fileState{sum: sum, rules: rules})
}

// remove deletes the rules of a file that is gone.
func (w *dirWatcher) remove(ctx context.Context, name string) {
	l := w.importer
	rev, err := l.replaceFile(ctx, name, nil)
	l.log.Info("Policy file removed, deleted its rules", "file", name, "revision", rev)
	if err != nil {
		l.log.Error("Removing policy file", "file", name, "error", err)
	}
	l.dropFile(name)
}

// file returns the state of a file.
func (l *importer) file(name string) (fileState, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.files[name]
	return s, ok
}

func (l *importer) setFile(name string, s fileState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.files[name] = s
}

func (l *importer) dropFile(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.files, name)
}

// fileNames returns the known files, sorted.
func (l *importer) fileNames() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	names := make([]string, 0, len(l.files))
	for n := range l.files {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
