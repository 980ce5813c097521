package identitycache

import (
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/policy/identity"
)

// ObserverOut registers an identity.Observer with the identity cell
// (policy/identity/identitycell): return it from a constructor registered
// with cell.Provide.
type ObserverOut struct {
	cell.Out

	Observer identity.Observer `group:"identity-observers"`
}
