package ipcache

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/apiary-net/apiary/policy/source"
)

// endpointResource names the metadata of a local endpoint.
func endpointResource(addr netip.Addr) ResourceID { return ResourceID("endpoint/" + addr.String()) }

// UpsertLocalEndpoint implements IPCache: source local, resource
// endpoint/<ip>, published to the kvstore when there is one.
func (c *Cache) UpsertLocalEndpoint(ep LocalEndpoint) (Revision, error) {
	if !ep.IP.IsValid() {
		return 0, errors.New("upsert local endpoint: field IP: not a valid address")
	}
	if ep.Identity == 0 {
		return 0, fmt.Errorf("upsert local endpoint %s: field Identity: 0 is not an identity", ep.IP)
	}
	prefix := HostPrefix(ep.IP)
	rev, err := c.UpsertMetadata(prefix, source.Local, endpointResource(prefix.Addr()), Metadata{
		Identity: ep.Identity, EncryptKey: ep.EncryptKey,
		K8sNamespace: ep.K8sNamespace, K8sPodName: ep.K8sPodName, K8sServiceAccount: ep.K8sServiceAccount,
		NamedPorts: ep.NamedPorts,
	})
	if err != nil {
		return 0, fmt.Errorf("upsert local endpoint %s: %w", ep.IP, err)
	}
	if c.kv != nil {
		c.kv.publish(c.localPair(prefix, ep))
	}
	return rev, nil
}

// DeleteLocalEndpoint implements IPCache.
func (c *Cache) DeleteLocalEndpoint(ip netip.Addr) (Revision, error) {
	if !ip.IsValid() {
		return 0, errors.New("delete local endpoint: field IP: not a valid address")
	}
	prefix := HostPrefix(ip)
	rev, err := c.RemoveMetadata(prefix, source.Local, endpointResource(prefix.Addr()))
	if err != nil {
		return 0, fmt.Errorf("delete local endpoint %s: %w", ip, err)
	}
	if c.kv != nil {
		c.kv.unpublish(NewIPIdentityPair(prefix, 0, netip.Addr{}))
	}
	return rev, nil
}

// localPair is the kvstore entry of a local endpoint: its host IP is this
// node's, so other agents know the tunnel peer, and its Metadata is
// Cilium's global endpoint id.
func (c *Cache) localPair(prefix netip.Prefix, ep LocalEndpoint) *IPIdentityPair {
	p := NewIPIdentityPair(prefix, ep.Identity, c.local.IP)
	p.Key = ep.EncryptKey
	p.K8sNamespace, p.K8sPodName, p.K8sServiceAccount = ep.K8sNamespace, ep.K8sPodName, ep.K8sServiceAccount
	p.NamedPorts = ep.NamedPorts
	if ep.EndpointID != 0 {
		p.Metadata = fmt.Sprintf("cilium-global:%s:%s:%d", c.cluster.ClusterName, c.local.Name, ep.EndpointID)
	}
	return p
}
