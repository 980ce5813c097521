package k8scep

import (
	"fmt"
	"math"
	"net/netip"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/policyapi"
	"github.com/apiary-net/apiary/policy/source"
)

// Endpoint is what the ipcache takes from a CiliumEndpoint.
type Endpoint struct {
	Node     netip.Addr
	Identity identity.NumericIdentity
	Prefixes []netip.Prefix
	Metadata ipcache.Metadata
}

// Decode reads a CiliumEndpoint. An object without status.identity.id or
// addresses yet decodes with no prefixes (nothing to add); malformed
// fields fail, naming the field.
func Decode(obj *unstructured.Unstructured) (Endpoint, error) {
	meta, _ := obj.Object["metadata"].(map[string]any)
	ns, _ := meta["namespace"].(string)
	name, _ := meta["name"].(string)
	return decode(ns, name, obj.Object)
}

// decode reads the CiliumEndpoint ns/name. Every agent reads every
// endpoint of the cluster, so it walks the informer's maps in place
// (never modifying them), each once, and names the object only when a
// field is wrong.
func decode(ns, name string, obj map[string]any) (Endpoint, error) {
	var ep Endpoint
	fail := func(field, format string, args ...any) (Endpoint, error) {
		return Endpoint{}, fmt.Errorf("CiliumEndpoint %s/%s: field %s: %s", ns, name, field, fmt.Sprintf(format, args...))
	}
	raw := obj["status"]
	st, ok := raw.(map[string]any)
	if raw != nil && !ok {
		return fail("status", "not an object")
	}
	ident, ok := st["identity"].(map[string]any)
	if st["identity"] != nil && !ok {
		return fail("status.identity", "not an object")
	}
	var id int64
	switch v := ident["id"].(type) {
	case nil:
	case int64:
		id = v
	default:
		return fail("status.identity.id", "%v is of type %T, not an integer", v, v)
	}
	switch {
	case id == 0:
		return ep, nil // not published with an identity yet
	case id < 0 || id > math.MaxUint32:
		return fail("status.identity.id", "%d is not an identity", id)
	}
	ep.Identity = identity.NumericIdentity(id)
	networking, _ := st["networking"].(map[string]any)
	node, _ := networking["node"].(string)
	var err error
	if ep.Node, err = netip.ParseAddr(node); err != nil {
		return fail("status.networking.node", "%q is not an IP address", node)
	}
	rawAddrs := networking["addressing"]
	addrs, ok := rawAddrs.([]any)
	if rawAddrs != nil && !ok {
		return fail("status.networking.addressing", "not a list")
	}
	for i, a := range addrs {
		pair, _ := a.(map[string]any)
		for _, family := range [...]string{"ipv4", "ipv6"} {
			s, _ := pair[family].(string)
			if s == "" {
				continue
			}
			ip, err := netip.ParseAddr(s)
			if err != nil || (family == "ipv4") != ip.Is4() {
				return fail(fmt.Sprintf("status.networking.addressing[%d].%s", i, family), "%q is not an %s address",
					s, strings.ToUpper(family[:2])+family[2:])
			}
			ep.Prefixes = append(ep.Prefixes, ipcache.HostPrefix(ip))
		}
	}
	ports, err := namedPorts(st, ns, name)
	if err != nil {
		return Endpoint{}, err
	}
	sa, _ := st["service-account"].(string)
	ep.Metadata = ipcache.Metadata{Identity: ep.Identity, TunnelPeer: ep.Node, K8sNamespace: ns,
		K8sPodName: name, K8sServiceAccount: sa, NamedPorts: ports}
	return ep, nil
}

func namedPorts(st map[string]any, ns, name string) ([]policyapi.NamedPort, error) {
	field := st["named-ports"]
	raw, ok := field.([]any)
	if field != nil && !ok {
		return nil, fmt.Errorf("CiliumEndpoint %s/%s: field status.named-ports: not a list", ns, name)
	}
	if len(raw) == 0 {
		return nil, nil
	}
	out := make([]policyapi.NamedPort, 0, len(raw))
	for i, r := range raw {
		m, _ := r.(map[string]any)
		n, _ := m["name"].(string)
		port, _ := m["port"].(int64)
		proto, _ := m["protocol"].(string)
		if n == "" || port <= 0 || port > math.MaxUint16 {
			return nil, fmt.Errorf("CiliumEndpoint %s/%s: field status.named-ports[%d]: name %q, port %d is not a named port", ns, name, i, n, port)
		}
		out = append(out, policyapi.NamedPort{Name: n, Port: uint16(port), Protocol: policyapi.Protocol(strings.ToUpper(proto))}.Normalized())
	}
	return out, nil
}

// resource names a CiliumEndpoint's contribution to the ipcache.
func resource(namespace, name string) ipcache.ResourceID {
	return ipcache.ResourceID("ciliumendpoint/" + namespace + "/" + name)
}

// Source is the ipcache source of CiliumEndpoint entries, as Cilium's.
const Source = source.CustomResource
