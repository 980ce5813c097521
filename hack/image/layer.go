package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// File is a file of the layer: Path in the image, read from Source.
type File struct {
	Path   string
	Source string
	Mode   int64
}

// Layer is one layer holding files and their parent directories, owned
// by root, every time set to mtime: the same inputs give the same
// digest.
func Layer(files []File, mtime time.Time) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	for _, f := range files {
		if err := addDirs(tw, dirs, path.Dir(f.Path), mtime); err != nil {
			return nil, err
		}
		if err := addFile(tw, f, mtime); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	})
}

// addDirs adds dir and its parents that are not in the layer yet.
func addDirs(tw *tar.Writer, done map[string]bool, dir string, mtime time.Time) error {
	if dir == "/" || done[dir] {
		return nil
	}
	if err := addDirs(tw, done, path.Dir(dir), mtime); err != nil {
		return err
	}
	done[dir] = true
	return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: strings.TrimPrefix(dir, "/") + "/",
		Mode: 0o755, ModTime: mtime, Format: tar.FormatPAX})
}

func addFile(tw *tar.Writer, f File, mtime time.Time) error {
	data, err := os.ReadFile(f.Source)
	if err != nil {
		return fmt.Errorf("layer file %s: %w", f.Path, err)
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(f.Path, "/"),
		Mode: f.Mode, Size: int64(len(data)), ModTime: mtime, Format: tar.FormatPAX}); err != nil {
		return err
	}
	_, err = tw.Write(data)
	return err
}
