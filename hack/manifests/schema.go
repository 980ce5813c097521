package manifests

import (
	"encoding/json"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// The schema follows the fields Cilium documents for cilium.io/v2
// policies (docs.cilium.io, "Layer 3/4/7 policy" and the CRD reference);
// where Cilium's own schema is open (L7 rules, toServices, toGroups,
// status) it preserves unknown fields, so that Cilium users' manifests
// apply unchanged even where apiary does not enforce them.

func str(desc string) apiextv1.JSONSchemaProps {
	return apiextv1.JSONSchemaProps{Type: "string", Description: desc}
}

func boolean(desc string) apiextv1.JSONSchemaProps {
	return apiextv1.JSONSchemaProps{Type: "boolean", Description: desc}
}

func arrayOf(desc string, items apiextv1.JSONSchemaProps) apiextv1.JSONSchemaProps {
	return apiextv1.JSONSchemaProps{Type: "array", Description: desc, Items: &apiextv1.JSONSchemaPropsOrArray{Schema: &items}}
}

func object(desc string, props map[string]apiextv1.JSONSchemaProps, required ...string) apiextv1.JSONSchemaProps {
	return apiextv1.JSONSchemaProps{Type: "object", Description: desc, Properties: props, Required: required}
}

func open(desc string) apiextv1.JSONSchemaProps {
	t := true
	return apiextv1.JSONSchemaProps{Type: "object", Description: desc, XPreserveUnknownFields: &t}
}

func enum(desc string, values ...string) apiextv1.JSONSchemaProps {
	s := str(desc)
	for _, v := range values {
		raw, _ := json.Marshal(v)
		s.Enum = append(s.Enum, apiextv1.JSON{Raw: raw})
	}
	return s
}

func withPattern(s apiextv1.JSONSchemaProps, pattern string) apiextv1.JSONSchemaProps {
	s.Pattern = pattern
	return s
}

// labelSelector is a Kubernetes label selector as Cilium's endpoint
// selectors take it (keys may carry a source prefix, "k8s:app").
func labelSelector(desc string) apiextv1.JSONSchemaProps {
	return object(desc, map[string]apiextv1.JSONSchemaProps{
		"matchLabels": {Type: "object", Description: "Labels the selected endpoints have (key: value).",
			AdditionalProperties: &apiextv1.JSONSchemaPropsOrBool{Allows: true, Schema: &apiextv1.JSONSchemaProps{Type: "string", MaxLength: ptr(int64(63))}}},
		"matchExpressions": arrayOf("Label requirements, all of which must hold.", object("", map[string]apiextv1.JSONSchemaProps{
			"key":      str("The label key."),
			"operator": enum("How the key relates to the values.", "In", "NotIn", "Exists", "DoesNotExist"),
			"values":   arrayOf("The values (In, NotIn).", str("")),
		}, "key", "operator")),
	})
}

func ptr[T any](v T) *T { return &v }

// entities are Cilium's entity names.
var entities = []string{"all", "world", "cluster", "host", "init", "ingress", "unmanaged", "remote-node",
	"health", "kube-apiserver", "none", "cluster-mesh"}

// cidrPattern is an IPv4 or IPv6 address or prefix, as Cilium's CIDR type.
const cidrPattern = `^(([0-9]{1,3}\.){3}[0-9]{1,3}(/[0-9]{1,2})?|[0-9a-fA-F:.]*:[0-9a-fA-F:.]*(/[0-9]{1,3})?)$`

// portPattern is a port number (0 to 65535) or an IANA service name.
const portPattern = `^([0-9]{1,5}|[a-zA-Z0-9]([a-zA-Z0-9-]{0,13}[a-zA-Z0-9])?)$`

func cidrSet() apiextv1.JSONSchemaProps {
	return arrayOf("CIDR prefixes with exceptions.", object("", map[string]apiextv1.JSONSchemaProps{
		"cidr":              withPattern(str("The prefix."), cidrPattern),
		"except":            arrayOf("Prefixes within cidr that are not selected.", withPattern(str(""), cidrPattern)),
		"cidrGroupRef":      str("Name of a CiliumCIDRGroup."),
		"cidrGroupSelector": labelSelector("Selects CiliumCIDRGroups by label."),
	}))
}

func icmps() apiextv1.JSONSchemaProps {
	return arrayOf("ICMP types allowed (or denied).", object("", map[string]apiextv1.JSONSchemaProps{
		"fields": arrayOf("ICMP fields.", object("", map[string]apiextv1.JSONSchemaProps{
			"family": enum("IPv4 or IPv6 (IPv4 when empty).", "IPv4", "IPv6"),
			"type":   {Description: "ICMP type, a number or a name (EchoRequest).", XIntOrString: true},
		}, "type")),
	}))
}

func portProtocols() apiextv1.JSONSchemaProps {
	return arrayOf("Ports and protocols.", object("", map[string]apiextv1.JSONSchemaProps{
		"port":     withPattern(str("Port number or name; 0 or empty is every port."), portPattern),
		"endPort":  {Type: "integer", Format: "int32", Description: "Last port of a range starting at port.", Minimum: ptr(0.0), Maximum: ptr(65535.0)},
		"protocol": enum("Protocol (ANY when empty).", "TCP", "UDP", "SCTP", "ICMP", "ICMPv6", "VRRP", "IGMP", "ANY"),
	}))
}

// toPorts is a list of port rules; deny rules have no L7 part.
func toPorts(deny bool) apiextv1.JSONSchemaProps {
	props := map[string]apiextv1.JSONSchemaProps{"ports": portProtocols()}
	if !deny {
		props["rules"] = open("L7 rules (http, kafka, dns, l7proto, l7), passed through.")
		props["terminatingTLS"] = open("TLS context terminating the connection.")
		props["originatingTLS"] = open("TLS context originating the connection.")
		props["serverNames"] = arrayOf("TLS SNI server names.", str(""))
		props["listener"] = open("Envoy listener reference.")
	}
	return arrayOf("Layer 4 (and 7) conditions.", object("", props))
}

// peerRule is an ingress or egress rule: dir is "from" or "to".
func peerRule(dir string, deny bool) apiextv1.JSONSchemaProps {
	props := map[string]apiextv1.JSONSchemaProps{
		dir + "Endpoints": arrayOf("Endpoints selected by label.", labelSelector("")),
		dir + "Requires":  arrayOf("Selectors every peer must also match (deprecated in Cilium).", labelSelector("")),
		dir + "CIDR":      arrayOf("Peers by CIDR prefix.", withPattern(str(""), cidrPattern)),
		dir + "CIDRSet":   cidrSet(),
		dir + "Entities":  arrayOf("Peers by entity.", enum("", entities...)),
		dir + "Groups":    arrayOf("Peers from a cloud provider group, passed through.", open("")),
		dir + "Nodes":     arrayOf("Nodes selected by label.", labelSelector("")),
		"toPorts":         toPorts(deny),
		"icmps":           icmps(),
	}
	if dir == "to" {
		props["toServices"] = arrayOf("Kubernetes services, passed through.", open(""))
		if !deny {
			props["toFQDNs"] = arrayOf("DNS names.", object("", map[string]apiextv1.JSONSchemaProps{
				"matchName":    str("A name."),
				"matchPattern": str("A pattern with '*'."),
			}))
		}
	}
	if !deny {
		props["authentication"] = object("Mutual authentication.", map[string]apiextv1.JSONSchemaProps{
			"mode": enum("", "disabled", "required", "test-always-fail"),
		})
	}
	return object("", props)
}

// rule is the schema of one policy rule (spec, or an item of specs).
func rule() apiextv1.JSONSchemaProps {
	return object("A policy rule: the endpoints (or nodes) it selects and what they may send and receive.", map[string]apiextv1.JSONSchemaProps{
		"endpointSelector":  labelSelector("The endpoints the rule applies to."),
		"nodeSelector":      labelSelector("The nodes the rule applies to (host policies)."),
		"ingress":           arrayOf("Traffic the endpoints may receive.", peerRule("from", false)),
		"ingressDeny":       arrayOf("Traffic the endpoints may not receive.", peerRule("from", true)),
		"egress":            arrayOf("Traffic the endpoints may send.", peerRule("to", false)),
		"egressDeny":        arrayOf("Traffic the endpoints may not send.", peerRule("to", true)),
		"labels":            arrayOf("Labels of the rule.", object("", map[string]apiextv1.JSONSchemaProps{"key": str(""), "value": str(""), "source": str("")}, "key")),
		"description":       str("What the rule is for."),
		"enableDefaultDeny": object("Whether selecting an endpoint denies what the rule does not allow.", map[string]apiextv1.JSONSchemaProps{"ingress": boolean(""), "egress": boolean("")}),
		"log":               object("Policy logging.", map[string]apiextv1.JSONSchemaProps{"value": str("")}),
	})
}
