package main

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// TestImage builds the archive as `make image` does and checks what a
// container runtime reads from it: the tag docker load and ctr import
// give it (the DaemonSet's reference), the config (entrypoint, user,
// env, labels), the files, and that the agent taken out of the image
// runs (`apiary-agent --version`, a static binary).
func TestImage(t *testing.T) {
	if _, err := os.Stat(DefaultCACerts); err != nil {
		t.Fatalf("the host's CA bundle: %v (install Debian's ca-certificates)", err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "apiary.tar")
	var log bytes.Buffer
	tag, err := Build(context.Background(), Options{Root: root, Out: out, Version: "v9.9.9-test", Revision: "abc123",
		Arch: "amd64", CACerts: DefaultCACerts, Log: &log})
	if err != nil {
		t.Fatalf("build: %v\n%s", err, log.String())
	}
	want, err := DaemonSetImage(filepath.Join(root, DaemonSet))
	if err != nil {
		t.Fatal(err)
	}

	t.Run("manifest.json tag", func(t *testing.T) {
		m, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return os.Open(out) })
		if err != nil {
			t.Fatal(err)
		}
		if len(m) != 1 || !slices.Equal(m[0].RepoTags, []string{want}) || len(m[0].Layers) != 1 || tag.String() != want {
			t.Fatalf("manifest.json = %+v (tag %s), want one image tagged %s with one layer", m, tag, want)
		}
	})

	img, err := tarball.ImageFromPath(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("config", func(t *testing.T) {
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		c := cf.Config
		if cf.OS != "linux" || cf.Architecture != "amd64" || !slices.Equal(c.Entrypoint, []string{"/usr/local/bin/apiary-agent"}) ||
			c.User != "65532:65532" || !slices.Contains(c.Env, "PATH=/usr/local/bin:/usr/bin:/bin") {
			t.Fatalf("config %s/%s %+v", cf.OS, cf.Architecture, c)
		}
		for k, v := range map[string]string{"org.opencontainers.image.version": "v9.9.9-test", "org.opencontainers.image.revision": "abc123",
			"org.opencontainers.image.source": "https://github.com/apiary-net/apiary", "org.opencontainers.image.created": "1970-01-01T00:00:00Z"} {
			if c.Labels[k] != v {
				t.Errorf("label %s = %q, want %q", k, c.Labels[k], v)
			}
		}
	})

	files := layerFiles(t, img)
	t.Run("files", func(t *testing.T) {
		for _, p := range []string{"usr/local/bin/apiary-agent", "usr/local/bin/apiary", "usr/local/bin/apiary-cni", "etc/ssl/certs/ca-certificates.crt"} {
			f, ok := files[p]
			if !ok || f.hdr.Uid != 0 || f.hdr.Size == 0 {
				t.Errorf("%s: in the image %v, %+v", p, ok, f.hdr)
			}
			if strings.HasPrefix(p, "usr/local/bin/") && f.hdr.Mode != 0o755 {
				t.Errorf("%s: mode %o, want 755", p, f.hdr.Mode)
			}
		}
	})

	t.Run("ctr images import and run", func(t *testing.T) { importAndRun(t, out, want) })

	t.Run("the agent runs", func(t *testing.T) {
		bin := filepath.Join(t.TempDir(), "apiary-agent")
		if err := os.WriteFile(bin, files["usr/local/bin/apiary-agent"].data, 0o755); err != nil {
			t.Fatal(err)
		}
		ef, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		defer ef.Close()
		for _, p := range ef.Progs {
			if p.Type == elf.PT_INTERP {
				t.Errorf("apiary-agent has a dynamic loader: not a static binary")
			}
		}
		got, err := exec.Command(bin, "--version").CombinedOutput()
		if err != nil || !strings.HasPrefix(string(got), "apiary-agent v9.9.9-test ") {
			t.Fatalf("apiary-agent --version = %q, %v", got, err)
		}
	})
}

type layerFile struct {
	hdr  *tar.Header
	data []byte
}

// layerFiles reads the files of the image's layers.
func layerFiles(t *testing.T, img v1.Image) map[string]layerFile {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]layerFile{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			hdr, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			out[hdr.Name] = layerFile{hdr: hdr, data: data}
		}
		rc.Close()
	}
	return out
}

// TestDockerfile: the Dockerfile gives its image the config and the
// files `make image` gives (it cannot be built here: no daemon).
func TestDockerfile(t *testing.T) {
	data, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := string(data)
	c := Config("v", "r", time.Unix(0, 0))
	want := []string{
		"FROM scratch",
		`ENTRYPOINT ["` + c.Entrypoint[0] + `"]`,
		"USER " + c.User,
		"WORKDIR " + c.WorkingDir,
		"COPY --from=build /etc/ssl/certs/ca-certificates.crt " + CACertsPath,
		"COPY --from=build /out/apiary-agent /out/apiary /out/apiary-cni " + BinDir + "/",
		"CGO_ENABLED=0 go build -trimpath",
	}
	want = append(want, c.Env...)
	for k, v := range c.Labels {
		switch k {
		case "org.opencontainers.image.version", "org.opencontainers.image.revision":
			want = append(want, k+`="${`)
		case "org.opencontainers.image.created": // docker sets the image's created time
		default:
			want = append(want, k+`="`+v+`"`)
		}
	}
	for _, w := range want {
		if !strings.Contains(df, w) {
			t.Errorf("Dockerfile lacks %q", w)
		}
	}
}
