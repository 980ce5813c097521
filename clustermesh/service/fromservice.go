package service

import (
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/svcmanager"
)

// protoNames are the ClusterService protocols of the datapath's.
var protoNames = map[uint8]string{datapath.ProtoTCP: "TCP", datapath.ProtoUDP: "UDP", datapath.ProtoSCTP: "SCTP"}

// FromService returns the ClusterService of a service of the service
// manager (a source without Kubernetes: --lb-state-file) in cluster c, as
// Cilium's writers publish a Service: the frontends are its ClusterIPs
// with its ports by name, the backends its local, ready backends with
// the ports they serve by name. It is the reverse of RemoteBackends.
func FromService(svc *svcmanager.Service, c cluster.Info) *ClusterService {
	cs := &ClusterService{
		Cluster: c.ClusterName, ClusterID: c.ClusterID, Namespace: svc.Namespace, Name: svc.Name,
		Frontends: map[string]PortConfiguration{}, Backends: map[string]PortConfiguration{},
		IncludeExternal: svc.Global, Shared: svc.Global && svc.Shared,
	}
	for _, fe := range svc.Frontends {
		if fe.Type != datapath.SVCTypeClusterIP {
			continue
		}
		addPort(cs.Frontends, fe.Addr, fe.PortName)
	}
	for _, be := range svc.Backends {
		if be.Condition != svcmanager.Ready || be.ClusterID != 0 {
			continue
		}
		if len(be.PortNames) == 0 {
			addPort(cs.Backends, be.Addr, "")
		}
		for _, name := range be.PortNames {
			addPort(cs.Backends, be.Addr, name)
		}
	}
	return cs
}

// addPort adds addr's port under name to the address's ports.
func addPort(into map[string]PortConfiguration, addr datapath.L3n4Addr, name string) {
	proto, ok := protoNames[addr.Proto]
	if !ok {
		return
	}
	ip := addr.Addr.String()
	if into[ip] == nil {
		into[ip] = PortConfiguration{}
	}
	into[ip][name] = &L4Addr{Protocol: proto, Port: addr.Port}
}
