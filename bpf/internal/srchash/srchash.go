package srchash

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// LockFile is the name of the file, beside the sources, that records the
// fingerprint and the compiler at generate time.
const LockFile = "sources.lock"

// Sum returns the hex sha256 over the C sources in fsys (every *.c and
// *.h file, in path order, each as its slash path, a newline and its
// content).
func Sum(fsys fs.FS) (string, error) {
	var files []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ext := path.Ext(p); !d.IsDir() && (ext == ".c" || ext == ".h") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("walk sources: %w", err)
	}
	sort.Strings(files)
	h := sha256.New()
	for _, p := range files {
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return "", fmt.Errorf("read source: %w", err)
		}
		fmt.Fprintf(h, "%s\n", p)
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Lock is the content of LockFile.
type Lock struct {
	SHA256 string // Sum of the sources
	Clang  string // first line of `clang --version`
}

// Format renders l as the lock file's text.
func (l Lock) Format() string {
	return fmt.Sprintf("sha256 %s\nclang %s\n", l.SHA256, l.Clang)
}

// Parse reads a lock file's text.
func Parse(text string) (Lock, error) {
	var l Lock
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		k, v, ok := strings.Cut(line, " ")
		if !ok {
			return Lock{}, fmt.Errorf("parse %s: line %q has no value", LockFile, line)
		}
		switch k {
		case "sha256":
			l.SHA256 = v
		case "clang":
			l.Clang = v
		default:
			return Lock{}, fmt.Errorf("parse %s: unknown field %q", LockFile, k)
		}
	}
	if l.SHA256 == "" || l.Clang == "" {
		return Lock{}, fmt.Errorf("parse %s: sha256 and clang are required", LockFile)
	}
	return l, nil
}
