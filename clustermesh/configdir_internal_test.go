package clustermesh

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// recordingHandler records what the dir watcher reports.
type recordingHandler struct {
	mu      sync.Mutex
	events  []string
	files   map[string]clusterFile
	refused map[string]error
}

func (h *recordingHandler) upsert(f clusterFile) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, "upsert "+f.name)
	h.files[f.name] = f
}

func (h *recordingHandler) remove(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, "remove "+name)
}

func (h *recordingHandler) invalid(refused map[string]error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.refused = refused
}

func (h *recordingHandler) take() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := strings.Join(h.events, ",")
	h.events = nil
	return out
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestDirScan drives scan directly (no fsnotify, no timers): what is a
// cluster config, what is ignored, refused, changed and removed.
func TestDirScan(t *testing.T) {
	dir := t.TempDir()
	h := &recordingHandler{files: map[string]clusterFile{}}
	w := newDirWatcher(dir, "cluster1", slog.New(slog.DiscardHandler), h)
	ctx := context.Background()
	scan := func() string { w.scan(ctx, nil); return h.take() }

	write(t, filepath.Join(dir, "cluster2"), "endpoints:\n- https://etcd.c2:2379\ntrusted-ca-file: c2-ca.crt\ncert-file: /abs/c2.crt\nkey-file: c2.key\n")
	write(t, filepath.Join(dir, "cluster1"), "endpoints:\n- https://etcd.c1:2379\n") // our own
	write(t, filepath.Join(dir, "README"), "# not a config\n")                       // no endpoints
	write(t, filepath.Join(dir, "Cluster_3"), "endpoints:\n- https://etcd.c3:2379\n")
	write(t, filepath.Join(dir, "c2-ca.crt"), "ca one") // a TLS file, no endpoints: ignored
	if err := os.Mkdir(filepath.Join(dir, "..2026_11_23"), 0o755); err != nil {
		t.Fatal(err)
	}

	if got := scan(); got != "upsert cluster2" {
		t.Errorf("first scan = %q, want only cluster2", got)
	}
	f := h.files["cluster2"]
	if got, want := f.cfg.TrustedCAFile, filepath.Join(dir, "c2-ca.crt"); got != want {
		t.Errorf("trusted-ca-file = %q, want %q (relative to the dir)", got, want)
	}
	if f.cfg.CertFile != "/abs/c2.crt" || f.cfg.KeyFile != filepath.Join(dir, "c2.key") {
		t.Errorf("cert-file, key-file = %q, %q", f.cfg.CertFile, f.cfg.KeyFile)
	}
	if err := h.refused["Cluster_3"]; err == nil || !strings.Contains(err.Error(), "cluster name") {
		t.Errorf("Cluster_3 refused with %v, want a cluster name error", err)
	}
	if len(h.refused) != 1 {
		t.Errorf("refused = %v, want only Cluster_3", h.refused)
	}

	if got := scan(); got != "" {
		t.Errorf("scan of an unchanged dir = %q, want nothing", got)
	}
	write(t, filepath.Join(dir, "c2-ca.crt"), "ca two")
	if got := scan(); got != "upsert cluster2" {
		t.Errorf("scan after the CA changed = %q, want cluster2 restarted", got)
	}
	write(t, filepath.Join(dir, "cluster2"), "endpoints: [") // broken: keep the connection, report it
	if got := scan(); got != "" || h.refused["cluster2"] == nil {
		t.Errorf("scan of a broken known file = %q, refused %v; want the connection kept and the error reported", got, h.refused)
	}
	write(t, filepath.Join(dir, "cluster2"), "endpoints:\n- https://etcd.c2:2379\n")
	if got := scan(); got != "upsert cluster2" {
		t.Errorf("scan of the repaired file = %q", got)
	}
	if err := os.Remove(filepath.Join(dir, "cluster2")); err != nil {
		t.Fatal(err)
	}
	if got := scan(); got != "remove cluster2" {
		t.Errorf("scan after removal = %q", got)
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range h.refused {
			if !yield(n) {
				return
			}
		}
	})
	if strings.Join(names, ",") != "Cluster_3" {
		t.Errorf("refused = %v", names)
	}
}

// orderHandler records invalid among the events, to check it ends a scan.
type orderHandler struct{ recordingHandler }

func (h *orderHandler) invalid(refused map[string]error) {
	h.recordingHandler.invalid(refused)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, "invalid")
}

// TestScanReportsRefusedLast: invalid (which ends the mesh's first scan)
// comes after the upserts and removals of the same scan, so the clusters
// are known when the first scan is done.
func TestScanReportsRefusedLast(t *testing.T) {
	dir := t.TempDir()
	h := &orderHandler{recordingHandler{files: map[string]clusterFile{}}}
	w := newDirWatcher(dir, "cluster1", slog.New(slog.DiscardHandler), h)
	write(t, filepath.Join(dir, "cluster2"), "endpoints:\n- https://etcd.c2:2379\n")
	write(t, filepath.Join(dir, "cluster3"), "endpoints: [\n")
	w.scan(context.Background(), nil)
	if got, want := h.take(), "upsert cluster2,invalid"; got != want {
		t.Errorf("first scan = %q, want %q", got, want)
	}
	if err := os.Remove(filepath.Join(dir, "cluster2")); err != nil {
		t.Fatal(err)
	}
	w.scan(context.Background(), nil)
	if got, want := h.take(), "remove cluster2,invalid"; got != want {
		t.Errorf("second scan = %q, want %q", got, want)
	}
}

// TestFirstScanDone: the mesh says its directory was read only after the
// first scan.
func TestFirstScanDone(t *testing.T) {
	cm := New(Params{Config: Config{ClusterMeshConfig: t.TempDir()}})
	if cm.FirstScanDone() {
		t.Fatal("FirstScanDone before Run = true")
	}
	cm.watcher.scan(context.Background(), nil)
	if !cm.FirstScanDone() {
		t.Fatal("FirstScanDone after a scan = false")
	}
}
