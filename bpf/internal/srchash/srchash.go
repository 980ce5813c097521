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
	SHA256  string            // Sum of the sources
	Clang   string            // first line of `clang --version`
	Objects map[string]string // ObjectSums of the objects generated from them
}

// Format renders l as the lock file's text.
func (l Lock) Format() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sha256 %s\nclang %s\n", l.SHA256, l.Clang)
	names := make([]string, 0, len(l.Objects))
	for name := range l.Objects {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(&b, "object %s %s\n", name, l.Objects[name])
	}
	return b.String()
}

// ObjectSums returns the hex sha256 of every *.o file at the top of fsys
// (the committed eBPF objects), by name.
func ObjectSums(fsys fs.FS) (map[string]string, error) {
	matches, err := fs.Glob(fsys, "*.o")
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(matches))
	for _, name := range matches {
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("read object: %w", err)
		}
		sum := sha256.Sum256(b)
		out[name] = hex.EncodeToString(sum[:])
	}
	return out, nil
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
		case "object":
			name, sum, ok := strings.Cut(v, " ")
			if !ok {
				return Lock{}, fmt.Errorf("parse %s: line %q is not object <name> <sha256>", LockFile, line)
			}
			if l.Objects == nil {
				l.Objects = map[string]string{}
			}
			l.Objects[name] = sum
		default:
			return Lock{}, fmt.Errorf("parse %s: unknown field %q", LockFile, k)
		}
	}
	if l.SHA256 == "" || l.Clang == "" {
		return Lock{}, fmt.Errorf("parse %s: sha256 and clang are required", LockFile)
	}
	return l, nil
}
