package cell

import (
	"slices"
	"strings"
	"sync"
	"time"
)

// Level is the health level of a component.
type Level string

// The health levels. Unknown is a scope that has not reported yet.
const (
	LevelUnknown  Level = "Unknown"
	LevelOK       Level = "OK"
	LevelDegraded Level = "Degraded"
	LevelStopped  Level = "Stopped"
)

// Health reports the health of a module or of a part of it. Every module
// gets one scoped to its id; NewScope makes sub-scopes ("job-sync",
// "controller-remote-etcd-c2").
type Health interface {
	// OK reports that the component works; message says how.
	OK(message string)
	// Degraded reports that the component does not work as it should.
	Degraded(reason string, err error)
	// Stopped reports that the component stopped on purpose.
	Stopped(reason string)
	// NewScope returns a child scope.
	NewScope(name string) Health
	// Close removes this scope and its children from the tree.
	Close()
}

// HealthStatus is the last report of one scope.
type HealthStatus struct {
	ID      string    `json:"id"`
	Level   Level     `json:"level"`
	Message string    `json:"message,omitempty"`
	Error   string    `json:"error,omitempty"`
	Since   time.Time `json:"since"`   // when the level last changed
	Updated time.Time `json:"updated"` // when it last reported
}

// HealthNode is a node of the health tree with the worst level of itself
// and its children.
type HealthNode struct {
	HealthStatus
	Name     string        `json:"name"`
	Children []*HealthNode `json:"children,omitempty"`
}

// HealthReporter gives read access to the health tree of a hive.
type HealthReporter interface {
	// All returns every scope that reported, sorted by id.
	All() []HealthStatus
	// Tree returns the tree below the root, with aggregated levels.
	Tree() *HealthNode
}

// HealthTree keeps the health reports of a hive.
type HealthTree struct {
	mu     sync.Mutex
	status map[string]*HealthStatus
	now    func() time.Time
}

var _ HealthReporter = (*HealthTree)(nil)

// NewHealthTree returns an empty tree. now is the clock (time.Now if nil).
func NewHealthTree(now func() time.Time) *HealthTree {
	if now == nil {
		now = time.Now
	}
	return &HealthTree{status: map[string]*HealthStatus{}, now: now}
}

// Root returns the root scope of the tree.
func (t *HealthTree) Root() Health { return &healthScope{tree: t} }

func (t *HealthTree) report(id string, level Level, msg string, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	st, ok := t.status[id]
	if !ok {
		st = &HealthStatus{ID: id, Since: now}
		t.status[id] = st
	}
	if st.Level != level {
		st.Since = now
	}
	st.Level, st.Message, st.Updated = level, msg, now
	st.Error = ""
	if err != nil {
		st.Error = err.Error()
	}
}

func (t *HealthTree) remove(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k := range t.status {
		if k == id || strings.HasPrefix(k, id+".") {
			delete(t.status, k)
		}
	}
}

// All returns every scope that reported, sorted by id.
func (t *HealthTree) All() []HealthStatus {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]HealthStatus, 0, len(t.status))
	for _, st := range t.status {
		out = append(out, *st)
	}
	slices.SortFunc(out, func(a, b HealthStatus) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Tree returns the reports as a tree with aggregated levels.
func (t *HealthTree) Tree() *HealthNode {
	root := &HealthNode{Name: "", HealthStatus: HealthStatus{Level: LevelUnknown}}
	for _, st := range t.All() {
		n := root
		parts := strings.Split(st.ID, ".")
		for i, p := range parts {
			n = childNode(n, p, strings.Join(parts[:i+1], "."))
		}
		n.HealthStatus = st
	}
	aggregate(root)
	return root
}

func childNode(n *HealthNode, name, id string) *HealthNode {
	for _, c := range n.Children {
		if c.Name == name {
			return c
		}
	}
	c := &HealthNode{Name: name, HealthStatus: HealthStatus{ID: id, Level: LevelUnknown}}
	n.Children = append(n.Children, c)
	return c
}

// aggregate sets each node's level to the worst of itself and its children.
func aggregate(n *HealthNode) Level {
	for _, c := range n.Children {
		n.Level = worse(n.Level, aggregate(c))
	}
	return n.Level
}

var levelRank = map[Level]int{LevelUnknown: 0, LevelStopped: 1, LevelOK: 2, LevelDegraded: 3}

func worse(a, b Level) Level {
	if levelRank[b] > levelRank[a] {
		return b
	}
	return a
}

type healthScope struct {
	tree *HealthTree
	id   string
}

func (h *healthScope) OK(message string) { h.tree.report(h.id, LevelOK, message, nil) }

func (h *healthScope) Degraded(reason string, err error) {
	h.tree.report(h.id, LevelDegraded, reason, err)
}

func (h *healthScope) Stopped(reason string) { h.tree.report(h.id, LevelStopped, reason, nil) }

func (h *healthScope) NewScope(name string) Health {
	id := name
	if h.id != "" {
		id = h.id + "." + name
	}
	return &healthScope{tree: h.tree, id: id}
}

func (h *healthScope) Close() { h.tree.remove(h.id) }
