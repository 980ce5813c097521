package status_test

import (
	"path/filepath"
	"testing"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/status"
)

func TestStatusEndpoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "apiary.sock")
	celltest.StartWithFlags(t, []string{"socket-path=" + path}, api.Cell, status.Cell, providerModule("extra", "Extra"))
	st, err := client.New(path).Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if st.State != status.Ok || len(st.Entries) != 4 {
		t.Fatalf("status = %+v, want Ok with 4 entries", st)
	}
	for i, name := range []string{"API", "Controllers", "Hive", "Extra"} {
		e := st.Entries[i]
		if e.Name != name || e.State != status.Ok || e.LastProbe == nil || e.Stale {
			t.Errorf("entry %d = %+v, want %s Ok with a probe time", i, e, name)
		}
	}
}
