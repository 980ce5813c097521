package svcmanager

import (
	"net/netip"
	"time"

	"github.com/apiary-net/apiary/datapath"
)

// Affinity is a global service's preference between the local cluster's
// backends and the remote ones (service.cilium.io/affinity).
type Affinity string

// Affinities, as Cilium spells them.
const (
	// AffinityNone balances to every cluster's backends.
	AffinityNone Affinity = ""
	// AffinityLocal uses the remote backends only while no local one is
	// ready.
	AffinityLocal Affinity = "local"
	// AffinityRemote uses the local backends only while no remote one is
	// healthy.
	AffinityRemote Affinity = "remote"
)

// Condition is a backend's condition as its source reports it; Desired
// turns it into a datapath.BackendState per frontend.
type Condition uint8

// Conditions of an endpoint (Kubernetes' ready, serving, terminating).
const (
	// Ready: serves new connections.
	Ready Condition = iota
	// ServingTerminating: terminating but still serving; chosen for new
	// connections only when the frontend has no ready backend
	// (Kubernetes' KEP-1669, as kube-proxy and Cilium do), otherwise kept
	// for its established connections.
	ServingTerminating
	// Terminating: terminating and no longer serving; kept for its
	// established connections, never chosen.
	Terminating
)

// Frontend is one address a service is reached at.
type Frontend struct {
	Addr datapath.L3n4Addr
	Type datapath.ServiceType
	// PortName is the service port's name; backends are matched by it.
	PortName string
}

// Backend is one backend address and port of a service.
type Backend struct {
	Addr datapath.L3n4Addr
	// PortNames are the service port names the port serves; empty: the
	// service's only, unnamed port, which every frontend matches.
	PortNames []string
	// NodeName is the node that hosts the backend ("" unknown).
	NodeName string
	// Hints are the zones and nodes the EndpointSlice controller hints
	// the endpoint for (topology-aware routing: trafficDistribution,
	// topology-mode Auto); nil: none. Shared, never changed.
	Hints     *Hints
	Condition Condition
	// ClusterID is the backend's cluster (0: this one); ClusterMesh's
	// status names the cluster.
	ClusterID uint32
}

// Hints are an endpoint's topology hints (endpoints[].hints).
type Hints struct {
	Zones []string // forZones
	Nodes []string // forNodes (PreferSameNode)
}

// Service is a service as a source describes it: the frontends (NodePort
// ones with the unspecified address, which Desired expands to the node's
// addresses) and this cluster's backends.
type Service struct {
	Namespace, Name string
	Frontends       []Frontend
	Backends        []Backend
	// SessionAffinityTimeout is ClientIP affinity's timeout (0: none).
	SessionAffinityTimeout time.Duration
	// ExtLocal and IntLocal are externalTrafficPolicy and
	// internalTrafficPolicy Local.
	ExtLocal, IntLocal bool
	// Global is service.cilium.io/global; Shared is
	// service.cilium.io/shared (this cluster's backends are published);
	// Affinity is service.cilium.io/affinity.
	Global, Shared bool
	Affinity       Affinity
	// SourceRanges, when not empty, are the only clients from outside
	// the cluster that reach the LoadBalancer frontends
	// (loadBalancerSourceRanges): every family's, masked, sorted (IPv4
	// first) and without duplicates; 0.0.0.0/32 and ::/128 match no
	// client. Desired gives each LoadBalancer frontend its family's, or
	// that family's deny range when there is none. Shared by the
	// Services made of one object: never changed.
	SourceRanges []netip.Prefix
	// HealthCheckNodePort is the port a LoadBalancer Service with
	// externalTrafficPolicy Local is probed on by its load balancer
	// (spec.healthCheckNodePort; 0: none): the health server answers
	// there whether this node has local endpoints (HealthChecks).
	HealthCheckNodePort uint16
	// Warnings are the parts of the source object that were ignored,
	// each naming its field.
	Warnings []string

	ref *serviceRef // the Converter's, for the manager
}

// NamespacedName is namespace/name.
func (s *Service) NamespacedName() string { return s.Namespace + "/" + s.Name }

// Node is this node: its name (local backends) and the addresses
// NodePort frontends are expanded to.
type Node struct {
	Name  string
	Addrs []netip.Addr
	// Zone is the node's topology.kubernetes.io/zone label ("":
	// unknown, no topology-aware routing).
	Zone string
}
