package ipcachecell

import (
	"context"
	"fmt"
	"slices"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/kvstore/layout"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/ipcache"
)

// newStatusProvider adds the IPCache line to `apiary status`:
// "6 entries, revision 42", with the kvstore side in the details. Skipped
// kvstore entries (malformed, or of another cluster) and prefixes waiting
// for an identity make it a Warning.
func newStatusProvider(id cell.FullModuleID, c *ipcache.Cache) status.ProviderOut {
	return status.NewProviderOut(id, "IPCache", func(context.Context) status.Report {
		return statusReport(c.Stats())
	})
}

func statusReport(st ipcache.Stats) status.Report {
	r := status.Report{State: status.Ok, Message: fmt.Sprintf("%s, revision %d", count(st.Entries, "entry", "entries"), st.Revision)}
	if st.Failed > 0 {
		r.State = status.Warning
		r.Details = append(r.Details, fmt.Sprintf("%d prefixes wait for an identity (allocation failed, retrying)", st.Failed))
	}
	kv := st.KVStore
	if kv == nil {
		return r
	}
	r.Details = append(r.Details,
		fmt.Sprintf("kvstore: %s/ %s, %s published (%s)", layout.IPDefaultPrefix, syncWord(kv.WatchSynced, "listed", "listing"),
			count(kv.Published, "local endpoint", "local endpoints"), syncWord(kv.WriteSynced, "synced", "syncing")))
	if skipped := kv.Malformed + kv.Refused; skipped > 0 {
		r.State = status.Warning
		r.Message += fmt.Sprintf(", %s skipped", count(skipped, "kvstore entry", "kvstore entries"))
		r.Details = append(r.Details,
			fmt.Sprintf("skipped %d malformed entries and refused %d of another cluster; last: %s", kv.Malformed, kv.Refused, kv.Last))
	}
	if n := len(kv.Conflicts); n > 0 {
		last := slices.MaxFunc(kv.Conflicts, func(a, b store.Conflict) int { return a.Time.Compare(b.Time) })
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
