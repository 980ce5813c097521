package clustermesh

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.yaml.in/yaml/v3"

	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/cells/safefile"
	"github.com/apiary-net/apiary/kvstore"
)

// configFileLimits bound a cluster config file: a regular file of at most
// 1 MiB.
var configFileLimits = safefile.Limits{MaxSize: 1 << 20, Timeout: 5 * time.Second}

// clusterFile is a valid config file of a remote cluster.
type clusterFile struct {
	name, path string
	hash       [sha256.Size]byte
	cfg        *kvstore.EtcdConfig
}

// dirHandler is told what the directory holds now.
type dirHandler interface {
	// upsert is called for a new or changed file.
	upsert(f clusterFile)
	// remove is called when a cluster's file is gone (or invalid now).
	remove(name string)
	// invalid reports the refused files (file name -> error); it is
	// called last, after the upserts and removals of the same scan.
	invalid(refused map[string]error)
}

// dirWatcher watches the --clustermesh-config directory. It survives the
// Kubernetes ..data symlink swap of secrets and ConfigMaps: it watches
// the directory and the directories of the files' resolved targets,
// rescans after a burst of events has settled (debounce), and compares
// content hashes (of the file and the TLS files it names), so a swap
// that changes nothing restarts nothing.
type dirWatcher struct {
	dir      string
	local    string // this cluster's name: its file is ignored
	log      *slog.Logger
	handler  dirHandler
	debounce time.Duration
	resync   time.Duration

	mu      sync.Mutex
	known   map[string][sha256.Size]byte
	watched map[string]bool // directories added to the fsnotify watcher
}

func newDirWatcher(dir, local string, log *slog.Logger, h dirHandler) *dirWatcher {
	return &dirWatcher{dir: dir, local: local, log: log, handler: h, debounce: 100 * time.Millisecond,
		resync: time.Minute, known: map[string][sha256.Size]byte{}, watched: map[string]bool{}}
}

// run watches until ctx ends; it scans once at once.
func (w *dirWatcher) run(ctx context.Context) error {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch %s: %w", w.dir, err)
	}
	defer fw.Close()
	w.addWatch(fw, w.dir)
	w.scan(ctx, fw)
	debounce := time.NewTimer(time.Hour)
	debounce.Stop()
	defer debounce.Stop()
	resync := time.NewTicker(w.resync)
	defer resync.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-fw.Events:
			if !ok {
				return nil
			}
			w.log.Debug("Clustermesh config dir event", "event", ev.String())
			debounce.Reset(w.debounce)
		case err, ok := <-fw.Errors:
			if !ok {
				return nil
			}
			w.log.Warn("Clustermesh config dir watch error", "dir", w.dir, "error", err)
			debounce.Reset(w.debounce)
		case <-debounce.C:
			w.scan(ctx, fw)
		case <-resync.C:
			w.scan(ctx, fw)
		}
	}
}

func (w *dirWatcher) addWatch(fw *fsnotify.Watcher, dir string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.watched[dir] {
		return
	}
	if err := fw.Add(dir); err != nil {
		w.log.Warn("Unable to watch directory", "dir", dir, "error", err)
		return
	}
	w.watched[dir] = true
}

// scan reads the directory and reports what changed.
func (w *dirWatcher) scan(ctx context.Context, fw *fsnotify.Watcher) {
	files, refused := w.read(ctx)
	if fw != nil {
		w.addWatch(fw, w.dir) // the directory may have been created meanwhile
		for _, f := range files {
			if target, err := filepath.EvalSymlinks(f.path); err == nil {
				w.addWatch(fw, filepath.Dir(target))
			}
		}
	}
	w.mu.Lock()
	var gone []string
	for name := range w.known {
		if _, bad := refused[name]; bad {
			continue // a known cluster's file broke: keep its connection, report the error
		}
		if _, ok := files[name]; !ok {
			gone = append(gone, name)
			delete(w.known, name)
		}
	}
	var changed []clusterFile
	for name, f := range files {
		if h, ok := w.known[name]; !ok || h != f.hash {
			w.known[name] = f.hash
			changed = append(changed, f)
		}
	}
	w.mu.Unlock()
	slices.Sort(gone)
	for _, name := range gone {
		w.log.Info("Remote cluster config removed", "cluster", name)
		w.handler.remove(name)
	}
	slices.SortFunc(changed, func(a, b clusterFile) int { return strings.Compare(a.name, b.name) })
	for _, f := range changed {
		w.log.Info("Remote cluster config added or changed", "cluster", f.name, "file", f.path)
		w.handler.upsert(f)
	}
	// Last, so that the mesh's first scan ends once the clusters of the
	// directory are known (WaitForRemotesSynced, the status line).
	w.handler.invalid(refused)
}

// read returns the valid cluster files by cluster name, and the refused
// ones with why.
func (w *dirWatcher) read(ctx context.Context) (map[string]clusterFile, map[string]error) {
	files, refused := map[string]clusterFile{}, map[string]error{}
	entries, err := os.ReadDir(w.dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			w.log.Warn("Unable to read the clustermesh config dir", "dir", w.dir, "error", err)
		}
		return files, refused
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || name == w.local {
			continue // ..data and friends; our own cluster
		}
		path := filepath.Join(w.dir, name)
		if st, err := os.Stat(path); err != nil || st.IsDir() {
			continue
		}
		f, ok, err := w.readFile(ctx, name, path)
		switch {
		case err != nil:
			refused[name] = err
		case ok:
			files[name] = f
		}
	}
	return files, refused
}

// readFile reads one file; ok is false for files that are no cluster
// config (no endpoints key).
func (w *dirWatcher) readFile(ctx context.Context, name, path string) (clusterFile, bool, error) {
	data, err := safefile.Read(ctx, path, configFileLimits)
	if err != nil {
		return clusterFile{}, false, fmt.Errorf("read %s: %w", path, err)
	}
	var probe map[string]any
	if err := yaml.Unmarshal(data, &probe); err != nil || probe["endpoints"] == nil {
		if err != nil && bytes.Contains(data, []byte("endpoints:")) {
			return clusterFile{}, false, fmt.Errorf("etcd config %s: %w", path, err) // a config, broken
		}
		w.log.Debug("Ignoring a file that is no cluster config (no endpoints)", "file", path)
		return clusterFile{}, false, nil
	}
	if err := cluster.ValidateName(name); err != nil {
		return clusterFile{}, false, fmt.Errorf("file %s: cluster name: %w", path, err)
	}
	cfg, err := kvstore.ParseEtcdConfig(path, data)
	if err != nil {
		return clusterFile{}, false, err
	}
	h := sha256.New()
	h.Write(data)
	for _, p := range []*string{&cfg.TrustedCAFile, &cfg.CAFile, &cfg.CertFile, &cfg.KeyFile} {
		if *p == "" {
			continue
		}
		if !filepath.IsAbs(*p) {
			*p = filepath.Join(w.dir, *p)
		}
		tlsData, _ := safefile.Read(ctx, *p, configFileLimits) // missing files fail at connect, naming the field
		h.Write([]byte(*p))
		h.Write(tlsData)
	}
	f := clusterFile{name: name, path: path, cfg: cfg}
	copy(f.hash[:], h.Sum(nil))
	return f, true, nil
}
