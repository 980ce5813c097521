package identitycache

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"

	"github.com/apiary-net/apiary/cells/safefile"
	"github.com/apiary-net/apiary/policy/identity"
)

// journal keeps the numbers an in-memory allocator handed out, one JSON
// line per new assignment ({"id":N,"key":"<sorted labels>"}), so that an
// agent restarted without a kvstore gives every label set the number it
// had: the BPF policy and ipcache maps, which outlive the agent, hold
// those numbers. Lines are appended with write(2) and no fsync: the maps
// live in the kernel and die with it, so only a process restart has to
// find the numbers again. At load the file is compacted to one line per
// label set.
type journal struct {
	path string
	f    *os.File
}

// journalLine is one assignment.
type journalLine struct {
	ID  identity.NumericIdentity `json:"id"`
	Key string                   `json:"key"`
}

// openJournal reads the assignments of path (a missing file has none),
// rewrites it compacted and opens it for appending. A line that does not
// decode, or an id outside first..last, fails the load: the caller must
// not hand out numbers that may mean something else in the maps.
func openJournal(path string, first, last identity.NumericIdentity) (*journal, map[string]identity.NumericIdentity, error) {
	assigned, err := readJournal(path, first, last)
	if err != nil {
		return nil, nil, err
	}
	var buf bytes.Buffer
	for _, key := range slices.Sorted(maps.Keys(assigned)) {
		line, _ := json.Marshal(journalLine{ID: assigned[key], Key: key})
		buf.Write(append(line, '\n'))
	}
	if err := safefile.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		return nil, nil, fmt.Errorf("compact identity journal: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("open identity journal: %w", err)
	}
	return &journal{path: path, f: f}, assigned, nil
}

func readJournal(path string, first, last identity.NumericIdentity) (map[string]identity.NumericIdentity, error) {
	assigned := map[string]identity.NumericIdentity{}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return assigned, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read identity journal: %w", err)
	}
	owner := map[identity.NumericIdentity]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		var l journalLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.Key == "" {
			return nil, fmt.Errorf("identity journal %s line %d: not an assignment: %q", path, n, sc.Text())
		}
		if l.ID < first || l.ID > last {
			return nil, fmt.Errorf("identity journal %s line %d: id %d outside %d..%d", path, n, l.ID, first, last)
		}
		// A later line wins: the id moved to another label set.
		if old, ok := owner[l.ID]; ok {
			delete(assigned, old)
		}
		if old, ok := assigned[l.Key]; ok {
			delete(owner, old)
		}
		assigned[l.Key], owner[l.ID] = l.ID, l.Key
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read identity journal: %w", err)
	}
	return assigned, nil
}

// record appends one assignment; the allocation fails with it.
func (j *journal) record(id identity.NumericIdentity, key string) error {
	line, err := json.Marshal(journalLine{ID: id, Key: key})
	if err != nil {
		return err
	}
	if _, err := j.f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("record identity %d in %s: %w", id, j.path, err)
	}
	return nil
}

func (j *journal) close() error { return j.f.Close() }
