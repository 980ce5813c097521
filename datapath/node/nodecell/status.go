package nodecell

import (
	"context"
	"fmt"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/datapath/node"
	"github.com/apiary-net/apiary/kvstore/layout"
)

// newStatusProvider adds the Nodes line to `apiary status`:
// "2 nodes (1 local, 1 remote)". Refused or malformed kvstore nodes, and
// another agent registering this node's name, make it a Warning that says
// so.
func newStatusProvider(id cell.FullModuleID, m *node.NodeManager) status.ProviderOut {
	return status.NewProviderOut(id, "Nodes", func(context.Context) status.Report {
		c, conflict := m.RegistrationConflict()
		return statusReport(m.Stats(), c, conflict)
	})
}

func statusReport(st node.Stats, c node.RegistrationConflict, conflict bool) status.Report {
	r := status.Report{State: status.Ok, Message: fmt.Sprintf("%s (%d local, %d remote)",
		plural(st.Nodes, "node", "nodes"), st.Local, st.Nodes-st.Local)}
	kv := st.KVStore
	if kv == nil {
		return r
	}
	r.Details = append(r.Details, fmt.Sprintf("kvstore: %s/ %s, local node registered under %s/%s (%s)",
		kv.WatchPrefix, word(kv.Listed, "listed", "listing"), layout.NodesPrefix, st.LocalKey,
		word(kv.Registered, "synced", "syncing")))
	if skipped := kv.Malformed + kv.Refused; skipped > 0 {
		r.State = status.Warning
		r.Message += fmt.Sprintf(", %s skipped", plural(skipped, "kvstore entry", "kvstore entries"))
		r.Details = append(r.Details, fmt.Sprintf("skipped %d malformed nodes and refused %d of another cluster; last: %s",
			kv.Malformed, kv.Refused, kv.Last))
	}
	if conflict {
		ago := time.Since(c.Time).Round(time.Second)
		if c.Deleted {
			r.Details = append(r.Details, fmt.Sprintf("local node key was deleted and written again %s ago (%d in a row)", ago, c.InARow))
		} else {
			r.State = status.Warning
			r.Message += ", node name also registered by " + c.OtherIP
			r.Details = append(r.Details, fmt.Sprintf("another agent registers %s with IP %s (same --node-name?); "+
				"each writes its own again, backing off: %d in a row, last %s ago", c.Key, c.OtherIP, c.InARow, ago))
		}
	}
	return r
}

func word(done bool, yes, no string) string {
	if done {
		return yes
	}
	return no
}

// plural formats n with the singular or plural noun: "1 node", "2 nodes".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
