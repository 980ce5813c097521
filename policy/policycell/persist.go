package policycell

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/safefile"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// Where and how the API-imported policies are kept.
const (
	// apiStateSubdir and apiStateName: <state-dir>/policy/api.json.
	apiStateSubdir = "policy"
	apiStateName   = "api.json"
	// apiStateVersion is the version of the file's format.
	apiStateVersion = 1
	// apiStateMaxSize bounds the file: an import that would make it
	// larger is refused (and so never fails a restart).
	apiStateMaxSize = 64 << 20
	// apiStateMode is the mode of the file (policies are not secrets,
	// but nobody else writes them).
	apiStateMode = 0o600
)

// apiState is the content of api.json: the imports still (partly) in
// force, oldest first.
type apiState struct {
	Version int         `json:"version"`
	Imports []apiImport `json:"imports"`
}

// apiImport is one successful import: the documents as the client sent
// them (re-parsed at start with the current parser) and, per policy,
// which of its rules are still in force.
type apiImport struct {
	Document string      `json:"document"`
	Policies []apiPolicy `json:"policies"`
}

// apiPolicy is one policy of an import: its origin labels (with the
// source=api label), how many rules it had and the indices of those still
// in force (a delete by a rule's own label removes some of them).
type apiPolicy struct {
	Origin []string `json:"origin"`
	Rules  int      `json:"rules"`
	Kept   []int    `json:"kept"`
}

// apiStore keeps the API-imported policies in the state dir, so that an
// agent restart does not drop them. The importer calls it under its lock,
// before it changes the repository: the file is written first, and a
// failed write leaves the repository as it was.
type apiStore struct {
	path string
	log  *slog.Logger

	imports []*storedImport // in import order
	// problems are what the start could not restore, for the status.
	problems []string
}

// storedImport is an import and the rules it added, by policy.
type storedImport struct {
	doc      string
	policies []storedPolicy
}

// storedPolicy is one policy of an import; rules[i] is nil once the
// policy's i-th rule has left the repository.
type storedPolicy struct {
	origin []string
	rules  []*policyapi.Rule
}

func newAPIStore(stateDir string, log *slog.Logger) *apiStore {
	return &apiStore{path: filepath.Join(stateDir, apiStateSubdir, apiStateName), log: log}
}

// newImport records the policies of an import, with their rules as
// they enter the repository.
func newImport(doc []byte, pols []*policyapi.Policy) *storedImport {
	imp := &storedImport{doc: string(doc)}
	for _, p := range pols {
		imp.policies = append(imp.policies, storedPolicy{
			origin: labelStrings(p.Labels.With(apiSourceLabel)),
			rules:  slices.Clone(p.Rules),
		})
	}
	return imp
}

// commit writes the state after a change: the rules still in force
// (inForce) and not removed by the change (gone), then add. It replaces
// the file before the caller changes the repository; on error nothing
// changed.
func (s *apiStore) commit(inForce map[*policyapi.Rule]bool, gone func(*policyapi.Rule) bool, add *storedImport) error {
	next := s.plan(inForce, gone, add)
	if err := s.write(next); err != nil {
		return err
	}
	s.imports = next
	return nil
}

// plan returns the imports that keep a rule after the change.
func (s *apiStore) plan(inForce map[*policyapi.Rule]bool, gone func(*policyapi.Rule) bool, add *storedImport) []*storedImport {
	var next []*storedImport
	for _, imp := range s.imports {
		var kept []storedPolicy
		for _, p := range imp.policies {
			rules, n := make([]*policyapi.Rule, len(p.rules)), 0
			for i, r := range p.rules {
				if r != nil && inForce[r] && !gone(r) {
					rules[i] = r
					n++
				}
			}
			if n > 0 {
				kept = append(kept, storedPolicy{origin: p.origin, rules: rules})
			}
		}
		if len(kept) > 0 {
			next = append(next, &storedImport{doc: imp.doc, policies: kept})
		}
	}
	if add != nil {
		next = append(next, add)
	}
	return next
}

// write encodes imports and replaces the file atomically.
func (s *apiStore) write(imports []*storedImport) error {
	st := apiState{Version: apiStateVersion, Imports: []apiImport{}}
	for _, imp := range imports {
		ai := apiImport{Document: imp.doc}
		for _, p := range imp.policies {
			ap := apiPolicy{Origin: p.origin, Rules: len(p.rules), Kept: []int{}}
			for i, r := range p.rules {
				if r != nil {
					ap.Kept = append(ap.Kept, i)
				}
			}
			ai.Policies = append(ai.Policies, ap)
		}
		st.Imports = append(st.Imports, ai)
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("encode API policies: %w", err)
	}
	if len(data) > apiStateMaxSize {
		return fmt.Errorf("write %s: the API-imported policies would take %d bytes, over %d", s.path, len(data), apiStateMaxSize)
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o750); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(s.path), err)
	}
	return safefile.WriteFile(s.path, append(data, '\n'), apiStateMode)
}

// decodeAPIState decodes the file strictly.
func decodeAPIState(data []byte) (apiState, error) {
	var st apiState
	if err := api.DecodeStrict(bytes.NewReader(data), &st); err != nil {
		return st, fmt.Errorf("decode: %w", err)
	}
	if st.Version != apiStateVersion {
		return st, fmt.Errorf("version: %d, want %d", st.Version, apiStateVersion)
	}
	for i, imp := range st.Imports {
		for j, p := range imp.Policies {
			for _, k := range p.Kept {
				if k < 0 || k >= p.Rules {
					return st, fmt.Errorf("imports[%d].policies[%d].kept: %d is not a rule index (rules: %d)", i, j, k, p.Rules)
				}
			}
		}
	}
	return st, nil
}

// moveAside renames the file to <name>.<what>-<time> and returns the new
// path.
func (s *apiStore) moveAside(what string) (string, error) {
	aside := s.path + "." + what + "-" + time.Now().UTC().Format("20060102T150405.000000000Z")
	if err := os.Rename(s.path, aside); err != nil {
		return "", fmt.Errorf("move %s aside: %w", s.path, err)
	}
	return aside, nil
}
