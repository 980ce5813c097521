package loader

import (
	"fmt"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/policy/identity"
)

// checkEndpoint checks the fields of ep the programs depend on: the
// endpoint id (1..65535), the identity and the host side's ifindex (0
// loads without attaching, as BPF_PROG_TEST_RUN users do).
func checkEndpoint(ep datapath.EndpointSpec) error {
	switch {
	case ep.ID == 0:
		return fmt.Errorf("endpoint id must be 1..65535")
	case ep.Identity == identity.IdentityUnknown:
		return fmt.Errorf("endpoint %d: identity must be set", ep.ID)
	case ep.IfIndex < 0:
		return fmt.Errorf("endpoint %d: ifindex %d is negative", ep.ID, ep.IfIndex)
	}
	return nil
}

func boolByte(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// enforceByte is an enforce_* constant of the programs: 0 off, 1 on, 2
// audit (on, but a denied flow passes).
func enforceByte(enforced, audit bool) uint8 {
	switch {
	case !enforced:
		return 0
	case audit:
		return 2
	}
	return 1
}
