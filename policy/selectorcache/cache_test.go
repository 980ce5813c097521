package selectorcache_test

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
	"github.com/apiary-net/apiary/policy/selectorcache"
)

type ids = []identity.NumericIdentity

// recorder is a SelectionUser that records what it is told.
type recorder struct {
	added, deleted ids
}

func (r *recorder) IdentitySelectionUpdated(_ *selectorcache.CachedSelector, added, deleted []identity.NumericIdentity) {
	r.added = append(r.added, added...)
	r.deleted = append(r.deleted, deleted...)
}

func ident(id identity.NumericIdentity, ls ...string) *identity.Identity {
	return &identity.Identity{ID: id, Labels: labels.MustParseList(ls...)}
}

func cidr(id identity.NumericIdentity, prefix string) *identity.Identity {
	return &identity.Identity{ID: id, Labels: identity.CIDRLabels(netip.MustParsePrefix(prefix))}
}

func change(kind identity.ChangeKind, idents ...*identity.Identity) []identity.Change {
	out := make([]identity.Change, len(idents))
	for i, id := range idents {
		out[i] = identity.Change{Kind: kind, Identity: id}
	}
	return out
}

func appSelector(app string) selectorcache.Selector {
	return selectorcache.EndpointSelector{EndpointSelector: policyapi.SelectLabels(labels.New(labels.SourceK8s, "app", app))}
}

func cidrSelector(prefix string, except ...string) selectorcache.Selector {
	r := policyapi.CIDRRule{Prefix: netip.MustParsePrefix(prefix)}
	for _, e := range except {
		r.Except = append(r.Except, netip.MustParsePrefix(e))
	}
	return selectorcache.CIDRSelector{CIDRRule: r}
}

var (
	web   = ident(300, "k8s:app=web")
	web2  = ident(301, "k8s:app=web")
	db    = ident(302, "k8s:app=db")
	net10 = cidr(1<<24|1, "10.0.0.0/8")
	net11 = cidr(1<<24|2, "10.1.0.0/16")
	net12 = cidr(1<<24|3, "10.2.0.0/16")
)

func TestSelections(t *testing.T) {
	tests := []struct {
		name string
		give selectorcache.Selector
		want ids
	}{
		{"endpoint selector", appSelector("web"), ids{300, 301}},
		{"endpoint selector selecting nothing", appSelector("cache"), ids{}},
		{"cidr", cidrSelector("10.0.0.0/8"), ids{net10.ID, net11.ID, net12.ID}},
		{"cidr with except", cidrSelector("10.0.0.0/8", "10.1.0.0/16"), ids{net10.ID, net12.ID}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := selectorcache.New()
			c.OnIdentitiesChanged(change(identity.Added, web, web2, db, net10, net11, net12))
			var got ids
			c.Locked(func() { got = c.AddSelectorLocked(tt.give, &recorder{}).Selections() })
			if !slices.Equal(got, tt.want) {
				t.Errorf("selections %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNotifications(t *testing.T) {
	tests := []struct {
		name        string
		give        [][]identity.Change
		wantAdded   ids
		wantDeleted ids
		wantSel     ids
	}{
		{"add matching", [][]identity.Change{change(identity.Added, web2)}, ids{301}, nil, ids{300, 301}},
		{"add other", [][]identity.Change{change(identity.Added, db)}, nil, nil, ids{300}},
		{"delete", [][]identity.Change{change(identity.Deleted, web)}, nil, ids{300}, ids{}},
		{"add and delete in one batch cancel", [][]identity.Change{append(change(identity.Added, web2), change(identity.Deleted, web2)...)}, nil, nil, ids{300}},
		{"relabel out of the selection", [][]identity.Change{change(identity.Added, ident(300, "k8s:app=db"))}, nil, ids{300}, ids{}},
		{"delete unknown", [][]identity.Change{change(identity.Deleted, web2)}, nil, nil, ids{300}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := selectorcache.New()
			c.OnIdentitiesChanged(change(identity.Added, web))
			rec := &recorder{}
			var cs *selectorcache.CachedSelector
			c.Locked(func() { cs = c.AddSelectorLocked(appSelector("web"), rec) })
			for _, batch := range tt.give {
				c.OnIdentitiesChanged(batch)
			}
			if !slices.Equal(rec.added, tt.wantAdded) || !slices.Equal(rec.deleted, tt.wantDeleted) {
				t.Errorf("told added %v deleted %v, want %v and %v", rec.added, rec.deleted, tt.wantAdded, tt.wantDeleted)
			}
			var sel ids
			c.Locked(func() { sel = cs.Selections() })
			if !slices.Equal(sel, tt.wantSel) {
				t.Errorf("selections %v, want %v", sel, tt.wantSel)
			}
		})
	}
}

func TestSelectorsAreSharedAndReleased(t *testing.T) {
	c := selectorcache.New()
	u1, u2 := &recorder{}, &recorder{}
	var a, b *selectorcache.CachedSelector
	c.Locked(func() {
		a = c.AddSelectorLocked(appSelector("web"), u1)
		b = c.AddSelectorLocked(appSelector("web"), u2)
	})
	if a != b || c.Len() != 1 {
		t.Fatalf("equal selectors not shared: %p %p, %d cached", a, b, c.Len())
	}
	c.OnIdentitiesChanged(change(identity.Added, web))
	if len(u1.added) != 1 || len(u2.added) != 1 {
		t.Errorf("users told %v and %v, want one identity each", u1.added, u2.added)
	}
	c.Locked(func() { c.RemoveSelectorLocked(a, u1) })
	if c.Len() != 1 {
		t.Errorf("%d selectors cached with one user left, want 1", c.Len())
	}
	c.OnIdentitiesChanged(change(identity.Added, web2))
	if len(u1.added) != 1 {
		t.Errorf("removed user still told: %v", u1.added)
	}
	c.Locked(func() { c.RemoveSelectorLocked(b, u2) })
	if c.Len() != 0 {
		t.Errorf("%d selectors cached with no user, want 0", c.Len())
	}
}

func TestPeerSelector(t *testing.T) {
	app := policyapi.SelectLabels(labels.New(labels.SourceK8s, "app", "web"))
	all := policyapi.EndpointSelector{}
	tests := []struct {
		name   string
		give   policyapi.Peer
		wantOK bool
	}{
		{"endpoints", policyapi.Peer{Kind: policyapi.PeerEndpoints, Selector: &app}, true},
		{"cidr", policyapi.Peer{Kind: policyapi.PeerCIDR, CIDR: &policyapi.CIDRRule{Prefix: netip.MustParsePrefix("10.0.0.0/8")}}, true},
		{"any", policyapi.Peer{Kind: policyapi.PeerAny}, false},
		{"entity all", policyapi.Peer{Kind: policyapi.PeerEntity, Entity: policyapi.EntityAll, Selector: &all}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, ok := selectorcache.PeerSelector(tt.give); ok != tt.wantOK {
				t.Errorf("PeerSelector ok = %v, want %v", ok, tt.wantOK)
			}
		})
	}
}

func TestOnAppliedRunsAfterUsers(t *testing.T) {
	c := selectorcache.New()
	u := &recorder{}
	c.Locked(func() { c.AddSelectorLocked(appSelector("web"), u) })
	var seen []string
	c.OnApplied(func(changes []identity.Change) {
		seen = append(seen, fmt.Sprintf("%d changes, user told of %d", len(changes), len(u.added)))
	})
	c.OnIdentitiesChanged(change(identity.Added, web, db))
	if got := strings.Join(seen, "; "); got != "2 changes, user told of 1" {
		t.Errorf("OnApplied saw %q, want the batch after the user was told", got)
	}
}
