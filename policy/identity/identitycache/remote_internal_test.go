package identitycache

import (
	"testing"

	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
)

// TestRemoteCacheLookupAfterHashCollision: two label sets whose hashes
// collide are both found by their labels, and each is forgotten with its
// identity.
func TestRemoteCacheLookupAfterHashCollision(t *testing.T) {
	r := newRemoteCache(newNotifier(nil))
	web := &identity.Identity{ID: 131328, Labels: labels.MustParseList("k8s:app=web")}
	db := &identity.Identity{ID: 131329, Labels: labels.MustParseList("k8s:app=db")}
	sum := r.labels.sum(kvstoreKey(web.Labels)) // db gets it too, as a collision would give
	r.OnChanges([]store.Change{{Key: &MasterKey{name: "131328", labelsSum: sum, Identity: web}}})
	r.OnChanges([]store.Change{{Key: &MasterKey{name: "131329", labelsSum: sum, Identity: db}}})
	for _, want := range []*identity.Identity{web, db} {
		if got := r.lookup(want.Labels); got != want {
			t.Errorf("lookup(%s) = %v, want %v", want.Labels, got, want)
		}
	}
	r.OnChanges([]store.Change{{Key: store.NameKey("131329"), Deleted: true}})
	if got := r.lookup(db.Labels); got != nil {
		t.Errorf("lookup(%s) after its deletion = %v, want nil", db.Labels, got)
	}
	if got := r.lookup(web.Labels); got != web {
		t.Errorf("lookup(%s) = %v, want %v", web.Labels, got, web)
	}
}
