package cli_test

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cmd/apiary-agent/agent"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/source"
)

// TestListsFollowPages lists an ipcache of more than two default pages
// (models.DefaultListLimit): the CLI prints every entry once, in order,
// as text and as one JSON document.
func TestListsFollowPages(t *testing.T) {
	var ipc ipcache.IPCache
	socket := startAgent(t, agent.ControlPlane, celltest.Capture(&ipc))
	n := 2*models.DefaultListLimit + 500
	var updates []ipcache.Update
	for i := range n {
		p := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)}), 32)
		updates = append(updates, ipcache.Update{Prefix: p, Source: source.KVStore, Resource: ipcache.ResourceID("kvstore/" + p.String()),
			Metadata: ipcache.Metadata{Identity: 300}})
	}
	rev, err := ipc.Apply(updates...)
	if err != nil {
		t.Fatal(err)
	}
	if err := ipc.WaitForRevision(t.Context(), rev); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := run(t, socket, "ipcache", "list", "--prefix", "10.1.0.0/16")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || errOut != "" || len(lines) != n+1 {
		t.Fatalf("ipcache list = %d (stderr %q), %d lines, want %d", code, errOut, len(lines), n+1)
	}
	for i, l := range lines[1:] {
		want := fmt.Sprintf("10.1.%d.%d/32", i>>8, i&255)
		if f := strings.Fields(l); len(f) < 3 || f[0] != want || f[1] != "300" || f[2] != "kvstore" {
			t.Fatalf("line %d = %q, want %s 300 kvstore", i+1, l, want)
		}
	}

	code, out, _ = run(t, socket, "ipcache", "list", "--prefix", "10.1.0.0/16", "-o", "json")
	var list models.IPCache
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list.Entries) != n || list.Continue != "" || list.Revision == 0 {
		t.Fatalf("ipcache list -o json = %d, %d entries, continue %q", code, len(list.Entries), list.Continue)
	}
	for i, e := range list.Entries {
		if want := fmt.Sprintf("10.1.%d.%d/32", i>>8, i&255); e.Prefix != want {
			t.Fatalf("entry %d = %s, want %s", i, e.Prefix, want)
		}
	}
}
