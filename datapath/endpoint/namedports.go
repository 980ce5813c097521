package endpoint

import (
	"errors"
	"fmt"
	"strings"

	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// NamedPort is a named port of an endpoint (a pod's container port):
// policy rules on the name resolve against it, ingress rules on this
// endpoint's policy and, through the ipcache, egress rules of others.
type NamedPort struct {
	Name     string
	Port     uint16
	Protocol string // TCP, UDP or SCTP
}

// checkNamedPorts validates and normalises named ports (protocol upper
// case, TCP when empty); the errors name the entry.
func checkNamedPorts(ps []NamedPort) ([]NamedPort, error) {
	var errs []error
	seen := map[string]bool{}
	out := make([]NamedPort, 0, len(ps))
	for i, p := range ps {
		p.Protocol = strings.ToUpper(p.Protocol)
		if p.Protocol == "" {
			p.Protocol = string(policyapi.ProtoTCP)
		}
		if msg := portNameProblem(p.Name); msg != "" {
			errs = append(errs, fmt.Errorf("[%d].name: %q %s", i, p.Name, msg))
		}
		if p.Port == 0 {
			errs = append(errs, fmt.Errorf("[%d].port: 0 is not a port", i))
		}
		switch policyapi.Protocol(p.Protocol) {
		case policyapi.ProtoTCP, policyapi.ProtoUDP, policyapi.ProtoSCTP:
		default:
			errs = append(errs, fmt.Errorf("[%d].protocol: %q is not TCP, UDP or SCTP", i, p.Protocol))
		}
		if key := p.Name + "/" + p.Protocol; seen[key] {
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

// portNameProblem checks an IANA service name, as Kubernetes does for
// container port names: 1-15 lower-case alphanumerics and '-', at least
// one letter, no leading, trailing or doubled '-'.
func portNameProblem(s string) string {
	switch {
	case s == "" || len(s) > 15:
		return "must be 1-15 characters"
	case strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789-") != "":
		return "must be lower-case alphanumerics or '-'"
	case strings.HasPrefix(s, "-") || strings.HasSuffix(s, "-") || strings.Contains(s, "--"):
		return "must not start or end with '-' or contain '--'"
	case strings.Trim(s, "0123456789-") == "":
		return "must contain a letter"
	}
	return ""
}

// policyPorts are the named ports as the policy engine takes them.
func policyPorts(ps []NamedPort) []policyapi.NamedPort {
	out := make([]policyapi.NamedPort, 0, len(ps))
	for _, p := range ps {
		out = append(out, policyapi.NamedPort{Name: p.Name, Port: p.Port, Protocol: policyapi.Protocol(p.Protocol)})
	}
	return out
}

// ipcachePorts are the named ports as the ipcache (and the kvstore
// entry) carries them.
func ipcachePorts(ps []NamedPort) []ipcache.NamedPort {
	if len(ps) == 0 {
		return nil
	}
	out := make([]ipcache.NamedPort, 0, len(ps))
	for _, p := range ps {
		out = append(out, ipcache.NamedPort{Name: p.Name, Port: p.Port, Protocol: p.Protocol})
	}
	return out
}
