package identitycell_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
)

// TestIdentityListPages lists reserved, global and local identities in
// small pages, standalone and with a real etcd: the pages are bounded and
// together they are GetIdentities, in order.
func TestIdentityListPages(t *testing.T) {
	for _, mode := range []string{"standalone", "kvstore"} {
		t.Run(mode, func(t *testing.T) {
			var cfg agentConfig
			if mode == "kvstore" {
				cfg = agentConfig{srv: kvstoretest.StartServer(t), ip: "10.0.0.1"}
			}
			a := startAgent(t, cfg)
			for i := range 15 {
				_, _, err := a.alloc.AllocateIdentity(ctxFor(t), labels.MustParseList(fmt.Sprintf("k8s:app=app-%d", i)))
				must(t, err)
				p := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 9, byte(i), 0}), 24)
				_, _, err = a.alloc.AllocateIdentity(ctxFor(t), identity.CIDRLabels(p))
				must(t, err)
			}
			var want []uint32
			for _, id := range a.alloc.GetIdentities() {
				want = append(want, uint32(id.ID))
			}
			const limit = 7
			var got []uint32
			pages := 0
			for page, err := range a.client.IdentityPages(context.Background(), client.ListOptions{Limit: limit}) {
				must(t, err)
				pages++
				if len(page.Items) > limit || len(page.Items) == 0 {
					t.Fatalf("page %d holds %d identities, want 1 to %d", pages, len(page.Items), limit)
				}
				for _, id := range page.Items {
					got = append(got, id.ID)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("paged ids = %v, want %v", got, want)
			}
			if wantPages := (len(want) + limit - 1) / limit; pages != wantPages {
				t.Errorf("%d pages, want %d", pages, wantPages)
			}
		})
	}
}

func TestIdentityListBadQuery(t *testing.T) {
	a := startAgent(t, agentConfig{})
	for _, tt := range []struct{ query, want string }{
		{"limit=-1", `query parameter limit: "-1" is not a positive integer`},
		{"continue=bm9kZTp4", "query parameter continue: not a continue token of this list"},
	} {
		_, err := a.client.GetRaw(context.Background(), "/v1/identity?"+tt.query)
		var apiErr *client.APIError
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || !strings.Contains(apiErr.Message, tt.want) {
			t.Errorf("GET /v1/identity?%s = %v, want 400 %q", tt.query, err, tt.want)
		}
	}
}
