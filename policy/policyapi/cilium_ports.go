package policyapi

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Cilium's limits on list lengths.
const (
	maxPorts      = 40
	maxICMPFields = 40
)

const whyL7 = "L7 policy needs a proxy, and apiary enforces L3/L4 only"

var (
	portRuleSpec = objectSpec{
		fields: []string{"ports"},
		notEnforced: map[string]string{
			"rules": "not enforced: L7 rules need a proxy, which apiary does not run; the L3/L4 part of this port rule applies (its ports are allowed to its peers, as Cilium's engine allows them before the proxy)",
		},
		unsupported: map[string]string{
			"listener":       whyL7,
			"originatingTLS": "TLS interception is not implemented",
			"terminatingTLS": "TLS interception is not implemented",
			"serverNames":    "TLS server name matching is not implemented",
		},
	}
	ciliumPortSpec = objectSpec{fields: []string{"port", "endPort", "protocol"}}
	icmpRuleSpec   = objectSpec{fields: []string{"fields"}}
	icmpFieldSpec  = objectSpec{fields: []string{"type", "family"}}
)

// toPorts reads the toPorts of an entry, flattened: every port of every
// entry.
func (d *decoder) toPorts(path string, m map[string]any) []PortProtocol {
	var out []PortProtocol
	for i, item := range d.optionalList(path, m, "toPorts") {
		p := index(field(path, "toPorts"), i)
		pm, ok := d.object(p, item, portRuleSpec)
		if !ok {
			continue
		}
		ports := d.requiredList(p, pm, "ports", maxPorts)
		for j, port := range ports {
			if pp, ok := d.ciliumPort(index(field(p, "ports"), j), port); ok {
				out = append(out, pp)
			}
		}
	}
	return out
}

// requiredList returns the non-empty list in field name of m, of at most
// max items.
func (d *decoder) requiredList(path string, m map[string]any, name string, max int) []any {
	v, ok := get(m, name)
	if !ok {
		d.failf(field(path, name), "required")
		return nil
	}
	l, ok := d.list(field(path, name), v)
	switch {
	case !ok:
	case len(l) == 0:
		d.failf(field(path, name), "must not be empty")
	case len(l) > max:
		d.fail(field(path, name), errMaxItems(max))
		return nil
	}
	return l
}

// ciliumPort reads {port, endPort, protocol}: port is a number or a
// named port ("0" is every port), protocol TCP, UDP, SCTP or ANY (the
// default), in any case.
func (d *decoder) ciliumPort(path string, v any) (PortProtocol, bool) {
	mark := len(d.errs)
	m, ok := d.object(path, v, ciliumPortSpec)
	if !ok {
		return PortProtocol{}, false
	}
	pp := PortProtocol{Protocol: ProtoAny}
	extended := false
	if pv, ok := get(m, "protocol"); ok {
		if s, ok := d.str(field(path, "protocol"), pv); ok {
			pp.Protocol, extended = d.ciliumProtocol(field(path, "protocol"), s)
		}
	}
	var num int64
	if pv, ok := get(m, "port"); ok {
		num, pp.Name = d.ciliumPortNumber(field(path, "port"), pv)
		pp.Port = uint16(num)
	} else if !extended {
		// Extended protocols have no port; the protocol is reported.
		d.failf(field(path, "port"), `required ("0" is every port)`)
	}
	if ev, ok := get(m, "endPort"); ok {
		if end, ok := d.integer(field(path, "endPort"), ev, 0, 65535); ok {
			d.checkEndPort(field(path, "endPort"), pp.Name, num, end)
			if end > num {
				pp.EndPort = uint16(end)
			}
		}
	}
	return pp, !d.failed(mark)
}

func (d *decoder) checkEndPort(path, name string, port, end int64) {
	if name != "" && end != 0 {
		d.failf(path, "requires a numeric port, not the named port %q", name)
	} else if msg := checkPortRange(port, end); msg != "" {
		d.failf(path, "%s", msg)
	}
}

// ciliumPortNumber reads a port: a number, a string of digits, or a port
// name (IANA service name, case-insensitive, returned in lower case).
func (d *decoder) ciliumPortNumber(path string, v any) (num int64, name string) {
	switch x := v.(type) {
	case json.Number:
		num, _ = d.integer(path, v, 0, 65535)
		return num, ""
	case string:
		if x != "" && strings.Trim(x, "0123456789") == "" {
			n, err := strconv.ParseUint(x, 10, 16)
			if err != nil {
				d.failf(path, "%q is not a port number in 0..65535", x)
			}
			return int64(n), ""
		}
		name := strings.ToLower(x)
		if msg := CheckPortName(name); msg != "" {
			d.failf(path, "%q is not a port number or a valid port name: a port name %s", x, msg)
			return 0, ""
		}
		return 0, name
	}
	d.failf(path, "must be a port number or name, not %s", typeName(v))
	return 0, ""
}

// extendedProtocols are Cilium's protocols without ports (its
// --enable-extended-ip-protocols): valid in Cilium, not enforced here.
var extendedProtocols = []string{"VRRP", "IGMP", "IPIP", "IPV6", "GRE", "ESP", "AH"}

// ciliumProtocol reads a port's protocol; extended reports one of
// Cilium's extended IP protocols, which is refused as not supported.
func (d *decoder) ciliumProtocol(path, s string) (p Protocol, extended bool) {
	switch p := Protocol(strings.ToUpper(s)); {
	case p == ProtoTCP || p == ProtoUDP || p == ProtoSCTP || p == ProtoAny:
		return p, false
	case p == "ICMP" || p == "ICMPV6":
		d.failf(path, "%q is not TCP, UDP, SCTP or ANY; ICMP types go in icmps", s)
	case slices.Contains(extendedProtocols, string(p)):
		d.fail(path, fmt.Errorf("%w: %s is one of Cilium's extended IP protocols (%s); apiary enforces TCP, UDP, SCTP and ICMP",
			ErrUnsupported, p, strings.Join(extendedProtocols, ", ")))
		return ProtoAny, true
	default:
		d.failf(path, "%q is not TCP, UDP, SCTP or ANY", s)
	}
	return ProtoAny, false
}

// icmps reads the icmps of an entry, flattened.
func (d *decoder) icmps(path string, m map[string]any) []ICMPField {
	var out []ICMPField
	for i, item := range d.optionalList(path, m, "icmps") {
		p := index(field(path, "icmps"), i)
		im, ok := d.object(p, item, icmpRuleSpec)
		if !ok {
			continue
		}
		for j, f := range d.requiredList(p, im, "fields", maxICMPFields) {
			if icmp, ok := d.icmpField(index(field(p, "fields"), j), f); ok {
				out = append(out, icmp)
			}
		}
	}
	return out
}

// icmpField reads {type, family}: type a number 0..255 or a type name of
// the family, family IPv4 (the default) or IPv6.
func (d *decoder) icmpField(path string, v any) (ICMPField, bool) {
	mark := len(d.errs)
	m, ok := d.object(path, v, icmpFieldSpec)
	if !ok {
		return ICMPField{}, false
	}
	f := ICMPField{Family: ICMPv4}
	if fv, ok := get(m, "family"); ok {
		if s, ok := d.str(field(path, "family"), fv); ok {
			f.Family = ICMPFamily(s)
			if f.Family != ICMPv4 && f.Family != ICMPv6 {
				d.failf(field(path, "family"), "%q is not IPv4 or IPv6", s)
			}
		}
	}
	tv, ok := get(m, "type")
	if !ok {
		d.failf(field(path, "type"), "required")
		return f, false
	}
	f.Type = d.icmpType(field(path, "type"), tv, f.Family)
	return f, !d.failed(mark)
}

func (d *decoder) icmpType(path string, v any, family ICMPFamily) uint8 {
	switch x := v.(type) {
	case json.Number:
		n, _ := d.integer(path, v, 0, 255)
		return uint8(n)
	case string:
		t, err := ParseICMPType(family, x)
		if err != nil {
			d.fail(path, err)
		}
		return t
	}
	d.failf(path, "must be a number or an ICMP type name, not %s", typeName(v))
	return 0
}
