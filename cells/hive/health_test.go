package hive_test

import (
	"errors"
	"testing"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
)

func TestHealthTree(t *testing.T) {
	var reporter cell.HealthReporter
	var sub cell.Health
	celltest.New(t, nil,
		celltest.Capture(&reporter),
		cell.Module("agent", "Agent",
			cell.Module("kvstore", "KVStore", cell.Invoke(func(h cell.Health) {
				h.OK("connected")
				sub = h.NewScope("session")
				sub.Degraded("lease lost", errors.New("etcdserver: requested lease not found"))
			})),
			cell.Module("api", "API", cell.Invoke(func(h cell.Health) { h.OK("serving") })),
		),
	)
	all := reporter.All()
	var ids []string
	for _, st := range all {
		ids = append(ids, st.ID+"="+string(st.Level))
	}
	want := "agent.api=OK agent.kvstore=OK agent.kvstore.session=Degraded"
	if got := join(ids); got != want {
		t.Fatalf("All() = %s, want %s", got, want)
	}
	if all[2].Error != "etcdserver: requested lease not found" || all[2].Message != "lease lost" {
		t.Errorf("session status = %+v", all[2])
	}

	tree := reporter.Tree()
	agent := tree.Children[0]
	if agent.Name != "agent" || agent.Level != cell.LevelDegraded {
		t.Errorf("agent node = %s/%s, want agent/Degraded (worst of its children)", agent.Name, agent.Level)
	}

	sub.OK("lease renewed")
	if lvl := reporter.Tree().Children[0].Level; lvl != cell.LevelOK {
		t.Errorf("after recovery agent level = %s, want OK", lvl)
	}
	sub.Close()
	if n := len(reporter.All()); n != 2 {
		t.Errorf("after Close %d statuses remain, want 2", n)
	}
}

func join(xs []string) string {
	out := ""
	for i, x := range xs {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}
