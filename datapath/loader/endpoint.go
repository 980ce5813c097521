package loader

import (
	"fmt"

	"github.com/apiary-net/apiary/policy/identity"
)

// Endpoint is what the programs of one endpoint are specialised with.
type Endpoint struct {
	// ID is the endpoint id (1..65535).
	ID uint16
	// Identity is the endpoint's security identity.
	Identity identity.NumericIdentity
	// Ifindex is the host-side veth's interface index (0 to load
	// without attaching, as BPF_PROG_TEST_RUN users do).
	Ifindex int
	// EnforceIngress and EnforceEgress turn policy enforcement on for
	// the direction; off, every new flow in it is allowed.
	EnforceIngress bool
	EnforceEgress  bool
}

// Validate checks the fields the programs depend on.
func (ep Endpoint) Validate() error {
	switch {
	case ep.ID == 0:
		return fmt.Errorf("endpoint id must be 1..65535")
	case ep.Identity == identity.IdentityUnknown:
		return fmt.Errorf("endpoint %d: identity must be set", ep.ID)
	case ep.Ifindex < 0:
		return fmt.Errorf("endpoint %d: ifindex %d is negative", ep.ID, ep.Ifindex)
	}
	return nil
}

func boolByte(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}
