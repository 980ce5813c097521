package ipcache

import (
	"context"
	"fmt"
	"slices"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/kvstore/store"
)

// newStatusProvider adds the IPCache line to `apiary status`:
// "6 entries, revision 42", with the kvstore side in the details. Skipped
// kvstore entries (malformed, or of another cluster) and prefixes waiting
// for an identity make it a Warning.
func newStatusProvider(id cell.FullModuleID, c *cache) status.ProviderOut {
	return status.NewProviderOut(id, "IPCache", func(context.Context) status.Report {
		return c.statusReport()
	})
}

func (c *cache) statusReport() status.Report {
	r := status.Report{State: status.Ok, Message: fmt.Sprintf("%s, revision %d", count(c.Len(), "entry", "entries"), c.Revision())}
	if n := c.failedCount(); n > 0 {
		r.State = status.Warning
		r.Details = append(r.Details, fmt.Sprintf("%d prefixes wait for an identity (allocation failed, retrying)", n))
	}
	if c.kv == nil {
		return r
	}
	st := c.kv.stats()
	r.Details = append(r.Details,
		fmt.Sprintf("kvstore: %s/ %s, %s published (%s)", KVStorePrefix, syncWord(st.watchSynced, "listed", "listing"),
			count(st.published, "local endpoint", "local endpoints"), syncWord(st.writeSynced, "synced", "syncing")))
	if skipped := st.malformed + st.refused; skipped > 0 {
		r.State = status.Warning
		r.Message += fmt.Sprintf(", %s skipped", count(skipped, "kvstore entry", "kvstore entries"))
		r.Details = append(r.Details,
			fmt.Sprintf("skipped %d malformed entries and refused %d of another cluster; last: %s", st.malformed, st.refused, st.last))
	}
	if n := len(st.conflicts); n > 0 {
		last := slices.MaxFunc(st.conflicts, func(a, b store.Conflict) int { return a.Time.Compare(b.Time) })
		r.Details = append(r.Details, fmt.Sprintf("restored %s that another writer deleted or changed; last: %s (%d in a row)",
			count(n, "local entry", "local entries"), last.Key, last.InARow))
	}
	return r
}

func syncWord(done bool, yes, no string) string {
	if done {
		return yes
	}
	return no
}

// count formats n with the singular or plural noun: "1 entry", "6 entries".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
