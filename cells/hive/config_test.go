package hive_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/hive"
)

type netConfig struct {
	ClusterName string
	ClusterID   uint32
	KVStoreOpt  map[string]string
	Labels      []string
	SyncPeriod  time.Duration
	EnableIPv6  bool
}

var defaultNetConfig = netConfig{ClusterName: "default", SyncPeriod: 5 * time.Minute}

func (def netConfig) Flags(fs *pflag.FlagSet) {
	fs.String("cluster-name", def.ClusterName, "Name of the cluster")
	fs.Uint32("cluster-id", def.ClusterID, "ID of the cluster")
	fs.StringToString("kvstore-opt", def.KVStoreOpt, "Key-value store options")
	fs.StringSlice("labels", def.Labels, "Identity-relevant labels")
	fs.Duration("sync-period", def.SyncPeriod, "Resync period")
	fs.Bool("enable-ipv6", def.EnableIPv6, "Enable IPv6")
}

func (c *netConfig) Validate() error {
	if c.ClusterID > 255 {
		return fmt.Errorf("--cluster-id: %d is out of range 0..255", c.ClusterID)
	}
	return nil
}

// parse builds a hive with netConfig, parses args like a command line and
// populates it, returning the config the cells see.
func parse(t *testing.T, args []string, cells ...cell.Cell) (netConfig, *hive.Hive, error) {
	t.Helper()
	var got netConfig
	cells = append([]cell.Cell{cell.Config(defaultNetConfig), celltest.Capture(&got)}, cells...)
	h := hive.NewWithOptions(hive.Options{Logger: celltest.Logger(t)}, cells...)
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	h.RegisterFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parse %q: %v", args, err)
	}
	err := h.Populate()
	return got, h, err
}

func writeConfigDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestConfigPrecedence(t *testing.T) {
	dir := writeConfigDir(t, map[string]string{
		"cluster-name": "from-dir\n",
		"cluster-id":   "3",
		"labels":       "k8s:app,k8s:tier",
		"sync-period":  "1m",
	})
	t.Setenv("APIARY_CLUSTER_ID", "2")
	t.Setenv("APIARY_ENABLE_IPV6", "true")
	t.Setenv("APIARY_CONFIG_DIR", dir)

	got, h, err := parse(t, []string{"--cluster-id=1", "--kvstore-opt", "etcd.config=/e.yaml,etcd.qps=20"})
	if err != nil {
		t.Fatal(err)
	}
	want := netConfig{
		ClusterName: "from-dir",                                                    // config dir
		ClusterID:   1,                                                             // flag beats env and dir
		KVStoreOpt:  map[string]string{"etcd.config": "/e.yaml", "etcd.qps": "20"}, // flag
		Labels:      []string{"k8s:app", "k8s:tier"},                               // config dir
		SyncPeriod:  time.Minute,                                                   // config dir
		EnableIPv6:  true,                                                          // env
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("config:\n got %+v\nwant %+v", got, want)
	}
	var out strings.Builder
	if err := h.Print(&out); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"--cluster-id=1 (flag)",
		"--enable-ipv6=true (env)",
		"--cluster-name=from-dir (config-dir)",
		"--config-dir=" + dir + " (env)",
		"--log-level=info (default)",
	} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("Print does not show %q:\n%s", line, out.String())
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	got, _, err := parse(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := defaultNetConfig
	want.KVStoreOpt = map[string]string{}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("config = %+v, want defaults %+v", got, want)
	}
}

func TestConfigDirUnknownFilesReported(t *testing.T) {
	dir := writeConfigDir(t, map[string]string{"cluster-name": "c1", "custer-id": "7", "tunnel": "vxlan"})
	// Kubernetes ConfigMap mounts have hidden ..data entries: not reported.
	if err := os.Mkdir(filepath.Join(dir, "..2026_11_22"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, h, err := parse(t, []string{"--config-dir", dir})
	if err != nil {
		t.Fatal(err)
	}
	if got.ClusterName != "c1" {
		t.Errorf("cluster-name = %q, want c1", got.ClusterName)
	}
	if u := h.UnknownConfigFiles(); !slices.Equal(u, []string{"custer-id", "tunnel"}) {
		t.Errorf("unknown files = %q, want custer-id and tunnel", u)
	}
}

func TestConfigBadValues(t *testing.T) {
	for _, tc := range []struct {
		name  string
		env   map[string]string
		files map[string]string
		args  []string
		want  string
	}{
		{
			name: "env not a number",
			env:  map[string]string{"APIARY_CLUSTER_ID": "two"},
			want: "environment variable APIARY_CLUSTER_ID (flag --cluster-id)",
		},
		{
			name:  "config dir file not a duration",
			files: map[string]string{"sync-period": "soon"},
			want:  "(flag --sync-period)",
		},
		{
			name: "validation names the flag",
			args: []string{"--cluster-id=300"},
			want: "invalid configuration: --cluster-id: 300 is out of range 0..255",
		},
		{
			name: "hive's own validation",
			args: []string{"--log-format=xml"},
			want: `--log-format: "xml" is not text or json`,
		},
		{
			name: "config dir missing",
			args: []string{"--config-dir=/nonexistent/apiary"},
			want: "read --config-dir /nonexistent/apiary",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			args := tc.args
			if tc.files != nil {
				args = append(args, "--config-dir", writeConfigDir(t, tc.files))
			}
			_, _, err := parse(t, args)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Populate() = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

type strayFlag struct{ Name string }

func (def strayFlag) Flags(fs *pflag.FlagSet) {
	fs.String("name", def.Name, "")
	fs.Int("retries", 3, "")
}

type strayField struct {
	Name    string
	Timeout time.Duration
}

func (def strayField) Flags(fs *pflag.FlagSet) { fs.String("name", def.Name, "") }

type clash struct{ ClusterName string }

func (def clash) Flags(fs *pflag.FlagSet) { fs.String("cluster-name", def.ClusterName, "") }

type unsupported struct{ Ch chan int }

func (def unsupported) Flags(fs *pflag.FlagSet) { fs.String("ch", "", "") }

func TestConfigStrictness(t *testing.T) {
	for _, tc := range []struct {
		name string
		give cell.Cell
		want string
	}{
		{name: "flag without field", give: cell.Config(strayFlag{}), want: "flag --retries has no field Retries"},
		{name: "field without flag", give: cell.Config(strayField{}), want: "field Timeout has no flag --timeout"},
		{name: "flag registered twice", give: cell.Config(clash{}), want: "flag --cluster-name is registered by both config hive_test.netConfig and config hive_test.clash"},
		{name: "unsupported field type", give: cell.Config(unsupported{}), want: "unsupported field type chan int"},
		{name: "config registered twice", give: cell.Config(defaultNetConfig), want: "config hive_test.netConfig: registered twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := parse(t, nil, tc.give)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Populate() = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestConfigOverride(t *testing.T) {
	got, _, err := parse(t, []string{"--cluster-name=c1"},
		celltest.Override(func(c *netConfig) { c.ClusterID = 9 }))
	if err != nil {
		t.Fatal(err)
	}
	if got.ClusterName != "c1" || got.ClusterID != 9 {
		t.Errorf("config = %+v, want name c1 (flag) and id 9 (override)", got)
	}
	_, _, err = parse(t, nil, celltest.Override(func(c *netConfig) { c.ClusterID = 1000 }))
	if err == nil || !strings.Contains(err.Error(), "--cluster-id") {
		t.Errorf("an override is validated too; Populate() = %v", err)
	}
}

func TestHiveFlagsFromEnvSetLogging(t *testing.T) {
	var buf strings.Builder
	t.Setenv("APIARY_LOG_FORMAT", "json")
	t.Setenv("APIARY_LOG_LEVEL", "debug")
	h := hive.NewWithOptions(hive.Options{LogOutput: &buf}, cell.Module("m", "M", cell.Invoke(func(cell.Lifecycle) {})))
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := h.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"level":"DEBUG","msg":"Invoked"`) || !strings.Contains(buf.String(), `"module":"m"`) {
		t.Errorf("want JSON debug logs with the module id, got:\n%s", buf.String())
	}
	if strings.Contains(buf.String(), "level=") {
		t.Errorf("text logs despite --log-format=json")
	}
}

// TestConfigValidatedWithoutReaders: a config nothing asks for is still
// validated at populate, so a bad flag is never silently accepted.
func TestConfigValidatedWithoutReaders(t *testing.T) {
	h := hive.NewWithOptions(hive.Options{Logger: celltest.Logger(t)}, cell.Config(defaultNetConfig))
	if err := celltest.SetFlags(h.Flags(), []string{"cluster-id=300"}); err != nil {
		t.Fatal(err)
	}
	err := h.Populate()
	if err == nil || err.Error() != "invalid configuration: --cluster-id: 300 is out of range 0..255" {
		t.Errorf("Populate = %v, want the config error", err)
	}
}
