package ipcachecell_test

import (
	"net/netip"
	"testing"

	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/ipcache/ipcachetest"
	"github.com/apiary-net/apiary/policy/source"
)

// op is one step of a precedence scenario: an upsert of an explicit
// identity (id != 0) or a removal, by one source.
type op struct {
	src source.Source
	id  identity.NumericIdentity
}

func TestSourcePrecedence(t *testing.T) {
	tests := []struct {
		name string
		give []op
		want string
	}{
		{name: "higher after lower wins", give: []op{{source.KVStore, 300}, {source.Local, 400}}, want: "400/local"},
		{name: "lower after higher is not applied", give: []op{{source.Local, 400}, {source.KVStore, 300}}, want: "400/local"},
		{name: "removing the higher reveals the lower", give: []op{{source.Local, 400}, {source.KVStore, 300}, {source.Local, 0}}, want: "300/kvstore"},
		{name: "removing the lower keeps the higher", give: []op{{source.Local, 400}, {source.KVStore, 300}, {source.KVStore, 0}}, want: "400/local"},
		{name: "removing a source that is not there changes nothing", give: []op{{source.KVStore, 300}, {source.Local, 0}}, want: "300/kvstore"},
		{name: "same source replaces", give: []op{{source.KVStore, 300}, {source.KVStore, 301}}, want: "301/kvstore"},
		{name: "kube-apiserver beats local", give: []op{{source.KubeAPIServer, 7}, {source.Local, 400}}, want: "7/kube-apiserver"},
		{name: "custom-resource beats k8s", give: []op{{source.Kubernetes, 300}, {source.CustomResource, 301}}, want: "301/custom-resource"},
		{name: "k8s beats clustermesh", give: []op{{source.ClusterMesh, 300}, {source.Kubernetes, 301}}, want: "301/k8s"},
		{name: "clustermesh beats directory", give: []op{{source.Directory, 300}, {source.ClusterMesh, 301}}, want: "301/clustermesh"},
		{name: "directory beats api", give: []op{{source.LocalAPI, 300}, {source.Directory, 301}}, want: "301/directory"},
		{name: "api beats generated", give: []op{{source.Generated, 300}, {source.LocalAPI, 301}}, want: "301/api"},
		{name: "generated beats restored", give: []op{{source.Restored, 300}, {source.Generated, 301}}, want: "301/generated"},
		{
			name: "removals reveal the next down the stack",
			give: []op{{source.Restored, 1}, {source.KVStore, 300}, {source.Local, 400}, {source.Local, 0}, {source.KVStore, 0}},
			want: "1/restored",
		},
		{name: "removing every source deletes the entry", give: []op{{source.KVStore, 300}, {source.Local, 400}, {source.KVStore, 0}, {source.Local, 0}}, want: "none"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, _, _ := startCache(t)
			prefix := pfx("10.0.1.5/32")
			for _, o := range tc.give {
				res := ipcache.ResourceID("test/" + string(o.src))
				if o.id == 0 {
					ipcachetest.Applied(t, c)(c.RemoveMetadata(prefix, o.src, res))
				} else {
					ipcachetest.Applied(t, c)(c.UpsertMetadata(prefix, o.src, res, ipcache.Metadata{Identity: o.id}))
				}
			}
			if got := entryOf(c, "10.0.1.5/32"); got != tc.want {
				t.Errorf("entry = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestEveryAdjacentPairOfSources(t *testing.T) {
	c, _, _ := startCache(t)
	done := ipcachetest.Applied(t, c)
	all := source.All()
	for i := 0; i+1 < len(all); i++ {
		higher, lower := all[i], all[i+1]
		prefix := pfx("10.1.0.0/24")
		done(upsert(c, prefix, higher, 500))
		done(upsert(c, prefix, lower, 600))
		if got, want := entryOf(c, "10.1.0.0/24"), "500/"+string(higher); got != want {
			t.Errorf("%s then %s: %s, want %s", higher, lower, got, want)
		}
		done(c.RemoveMetadata(prefix, higher, "r"))
		if got, want := entryOf(c, "10.1.0.0/24"), "600/"+string(lower); got != want {
			t.Errorf("%s removed: %s, want %s", higher, got, want)
		}
		done(c.RemoveMetadata(prefix, lower, "r"))
	}
}

func upsert(c ipcache.IPCache, p netip.Prefix, src source.Source, id identity.NumericIdentity) (ipcache.Revision, error) {
	return c.UpsertMetadata(p, src, "r", ipcache.Metadata{Identity: id})
}
