package endpoint

import (
	"errors"
	"fmt"

	"github.com/apiary-net/apiary/policy/policyapi"
)

// checkNamedPorts validates and normalises an endpoint's named ports (a
// pod's container ports: policy rules on the name resolve against them,
// ingress rules on this endpoint's policy and, through the ipcache,
// egress rules of others): protocol upper case, TCP when empty; names
// checked by policyapi.CheckPortName. The errors name the entry.
func checkNamedPorts(ps []policyapi.NamedPort) ([]policyapi.NamedPort, error) {
	var errs []error
	seen := map[string]bool{}
	out := make([]policyapi.NamedPort, 0, len(ps))
	for i, p := range ps {
		p = p.Normalized()
		if msg := policyapi.CheckPortName(p.Name); msg != "" {
			errs = append(errs, fmt.Errorf("[%d].name: %q %s", i, p.Name, msg))
		}
		if p.Port == 0 {
			errs = append(errs, fmt.Errorf("[%d].port: 0 is not a port", i))
		}
		switch p.Protocol {
		case policyapi.ProtoTCP, policyapi.ProtoUDP, policyapi.ProtoSCTP:
		default:
			errs = append(errs, fmt.Errorf("[%d].protocol: %q is not TCP, UDP or SCTP", i, p.Protocol))
		}
		if key := p.Name + "/" + string(p.Protocol); seen[key] {
			errs = append(errs, fmt.Errorf("[%d]: %s declared twice", i, key))
		} else {
			seen[key] = true
		}
		out = append(out, p)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, &FieldError{Field: "named-ports", Err: err}
	}
	return out, nil
}
