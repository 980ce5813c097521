package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// What goes into the image, and where.
const (
	// BinDir holds the three programs.
	BinDir = "/usr/local/bin"
	// CACertsPath is where the CA bundle goes (Debian's path, which Go's
	// crypto/x509 reads).
	CACertsPath = "/etc/ssl/certs/ca-certificates.crt"
	// DefaultCACerts is the host's bundle (Debian's ca-certificates).
	DefaultCACerts = "/etc/ssl/certs/ca-certificates.crt"
	// User is the image's default user: nonroot (distroless' 65532).
	// Every container of the DaemonSet runs as root (runAsUser: 0): the
	// agent loads BPF, changes links and routes and mounts bpffs, and
	// the init containers write into the host's /opt/cni/bin and mount
	// bpffs. The image's default only matters for a container run by
	// hand (`docker run ... apiary --help`), which needs no root.
	User = "65532:65532"
	// DaemonSet is the manifest whose image reference tags the image.
	DaemonSet = "install/kubernetes/daemonset.yaml"
)

// Programs are the commands built into BinDir; the first is the
// entrypoint.
var Programs = []string{"apiary-agent", "apiary", "apiary-cni"}

// Options say what Build builds.
type Options struct {
	Root     string // the repository
	Out      string // the archive
	Tag      string // the reference; empty: the DaemonSet's
	Version  string // linked in and labelled
	Revision string // the org.opencontainers.image.revision label
	Created  string // RFC 3339; empty: the Unix epoch
	Arch     string // GOARCH
	CACerts  string // the CA bundle file
	Log      io.Writer
}

// Build compiles the programs and writes the image archive; it returns
// the image's reference.
func Build(ctx context.Context, o Options) (name.Tag, error) {
	if o.Tag == "" {
		ref, err := DaemonSetImage(filepath.Join(o.Root, DaemonSet))
		if err != nil {
			return name.Tag{}, err
		}
		o.Tag = ref
	}
	tag, err := name.NewTag(o.Tag, name.StrictValidation)
	if err != nil {
		return name.Tag{}, fmt.Errorf("--tag: %w", err)
	}
	created := time.Unix(0, 0).UTC()
	if o.Created != "" {
		if created, err = time.Parse(time.RFC3339, o.Created); err != nil {
			return name.Tag{}, fmt.Errorf("--created: %w", err)
		}
	}
	bin, err := os.MkdirTemp("", "apiary-image-")
	if err != nil {
		return name.Tag{}, err
	}
	defer os.RemoveAll(bin)
	if err := compile(ctx, o, bin); err != nil {
		return name.Tag{}, err
	}
	files := []File{{Path: CACertsPath, Source: o.CACerts, Mode: 0o644}}
	for _, p := range Programs {
		files = append(files, File{Path: BinDir + "/" + p, Source: filepath.Join(bin, p), Mode: 0o755})
	}
	img, err := image(files, o, created)
	if err != nil {
		return name.Tag{}, err
	}
	if err := writeArchive(o.Out, tag, img); err != nil {
		return name.Tag{}, err
	}
	return tag, nil
}

// compile builds the static programs into dir.
func compile(ctx context.Context, o Options, dir string) error {
	args := []string{"build", "-trimpath", "-ldflags",
		"-s -w -X github.com/apiary-net/apiary/cells/version.Version=" + o.Version, "-o", dir + "/"}
	for _, p := range Programs {
		args = append(args, "./cmd/"+p)
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = o.Root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+o.Arch)
	cmd.Stdout, cmd.Stderr = o.Log, o.Log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build the programs: %w", err)
	}
	return nil
}

// image is the empty base with one layer of files and apiary's config.
func image(files []File, o Options, created time.Time) (v1.Image, error) {
	layer, err := Layer(files, created)
	if err != nil {
		return nil, err
	}
	img, err := mutate.Append(empty.Image, mutate.Addendum{Layer: layer, History: v1.History{
		Created: v1.Time{Time: created}, CreatedBy: "hack/image: " + fmt.Sprint(Programs) + " and the CA bundle",
	}})
	if err != nil {
		return nil, fmt.Errorf("add the layer: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS, cf.Created = o.Arch, "linux", v1.Time{Time: created}
	cf.Config = Config(o.Version, o.Revision, created)
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return nil, fmt.Errorf("set the config: %w", err)
	}
	return img, nil
}

// Config is the image's run configuration, the Dockerfile's too.
func Config(version, revision string, created time.Time) v1.Config {
	labels := map[string]string{
		"org.opencontainers.image.title":       "apiary",
		"org.opencontainers.image.description": "apiary-agent (node networking: identities, eBPF policy, ClusterMesh), the apiary CLI and the apiary-cni plugin",
		"org.opencontainers.image.source":      "https://github.com/apiary-net/apiary",
		"org.opencontainers.image.licenses":    "Apache-2.0",
		"org.opencontainers.image.version":     version,
		"org.opencontainers.image.created":     created.Format(time.RFC3339),
	}
	if revision != "" {
		labels["org.opencontainers.image.revision"] = revision
	}
	return v1.Config{
		Entrypoint: []string{BinDir + "/" + Programs[0]},
		Env:        []string{"PATH=" + BinDir + ":/usr/bin:/bin", "SSL_CERT_FILE=" + CACertsPath},
		User:       User,
		WorkingDir: "/",
		Labels:     labels,
	}
}

// writeArchive writes the docker archive through a temporary file.
func writeArchive(out string, tag name.Tag, img v1.Image) error {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	tmp := out + ".tmp"
	if err := tarball.WriteToFile(tmp, tag, img); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", out, err)
	}
	return os.Rename(tmp, out)
}

var imageLine = regexp.MustCompile(`(?m)^\s*image:\s*"?([^"\s]+)"?\s*$`)

// DaemonSetImage returns the one image reference the DaemonSet's
// containers use.
func DaemonSetImage(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read the image of the DaemonSet: %w", err)
	}
	var ref string
	for _, m := range imageLine.FindAllSubmatch(data, -1) {
		switch {
		case ref == "":
			ref = string(m[1])
		case ref != string(m[1]):
			return "", fmt.Errorf("%s: containers use two images, %s and %s", path, ref, m[1])
		}
	}
	if ref == "" {
		return "", errors.New(path + ": no image")
	}
	return ref, nil
}
