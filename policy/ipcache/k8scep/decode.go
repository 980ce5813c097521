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
	name := obj.GetNamespace() + "/" + obj.GetName()
	var ep Endpoint
	// The object is the informer's: read in place (NestedMap and
	// NestedSlice would deep-copy it), never modify.
	raw, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "status")
	st, ok := raw.(map[string]any)
	if raw != nil && !ok {
		return ep, fmt.Errorf("CiliumEndpoint %s: field status: not an object", name)
	}
	id, ok, err := unstructured.NestedInt64(st, "identity", "id")
	switch {
	case err != nil:
		return ep, fmt.Errorf("CiliumEndpoint %s: field status.identity.id: %w", name, err)
	case !ok || id == 0:
		return ep, nil // not published with an identity yet
	case id < 0 || id > math.MaxUint32:
		return ep, fmt.Errorf("CiliumEndpoint %s: field status.identity.id: %d is not an identity", name, id)
	}
	ep.Identity = identity.NumericIdentity(id)
	node, _, _ := unstructured.NestedString(st, "networking", "node")
	if ep.Node, err = netip.ParseAddr(node); err != nil {
		return Endpoint{}, fmt.Errorf("CiliumEndpoint %s: field status.networking.node: %q is not an IP address", name, node)
	}
	rawAddrs, _, _ := unstructured.NestedFieldNoCopy(st, "networking", "addressing")
	addrs, ok := rawAddrs.([]any)
	if rawAddrs != nil && !ok {
		return Endpoint{}, fmt.Errorf("CiliumEndpoint %s: field status.networking.addressing: not a list", name)
	}
	for i, a := range addrs {
		pair, _ := a.(map[string]any)
		for _, family := range []string{"ipv4", "ipv6"} {
			s, _ := pair[family].(string)
			if s == "" {
				continue
			}
			ip, err := netip.ParseAddr(s)
			if err != nil || (family == "ipv4") != ip.Is4() {
				return Endpoint{}, fmt.Errorf("CiliumEndpoint %s: field status.networking.addressing[%d].%s: %q is not an %s address",
					name, i, family, s, strings.ToUpper(family[:2])+family[2:])
			}
			ep.Prefixes = append(ep.Prefixes, ipcache.HostPrefix(ip))
		}
	}
	ports, err := namedPorts(st, name)
	if err != nil {
		return Endpoint{}, err
	}
	sa, _, _ := unstructured.NestedString(st, "service-account")
	ep.Metadata = ipcache.Metadata{Identity: ep.Identity, TunnelPeer: ep.Node, K8sNamespace: obj.GetNamespace(),
		K8sPodName: obj.GetName(), K8sServiceAccount: sa, NamedPorts: ports}
	return ep, nil
}

func namedPorts(st map[string]any, name string) ([]policyapi.NamedPort, error) {
	field, _, _ := unstructured.NestedFieldNoCopy(st, "named-ports")
	raw, ok := field.([]any)
	if field != nil && !ok {
		return nil, fmt.Errorf("CiliumEndpoint %s: field status.named-ports: not a list", name)
	}
	var out []policyapi.NamedPort
	for i, r := range raw {
		m, _ := r.(map[string]any)
		n, _ := m["name"].(string)
		port, _ := m["port"].(int64)
		proto, _ := m["protocol"].(string)
		if n == "" || port <= 0 || port > math.MaxUint16 {
			return nil, fmt.Errorf("CiliumEndpoint %s: field status.named-ports[%d]: name %q, port %d is not a named port", name, i, n, port)
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
