package service

import (
	"net/netip"
	"slices"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/svcmanager"
)

// protoNumbers are the IANA numbers of the protocols a backend port can
// have in the datapath (ANY has none: such ports are left out).
var protoNumbers = map[string]uint8{"TCP": datapath.ProtoTCP, "UDP": datapath.ProtoUDP, "SCTP": datapath.ProtoSCTP}

// RemoteBackends returns the backends the clusters other than local
// share in parts (Cache.Get), for the service manager: one per address
// and port, with the port names it serves and its cluster.
func RemoteBackends(parts []*ClusterService, local string) []svcmanager.Backend {
	var out []svcmanager.Backend
	for _, cs := range parts {
		if cs.Cluster == local {
			continue
		}
		for ip, ports := range cs.Backends {
			addr, err := netip.ParseAddr(ip) // checked by Decode
			if err != nil {
				continue
			}
			byPort := map[datapath.L3n4Addr][]string{}
			for name, p := range ports {
				proto, ok := protoNumbers[p.Protocol]
				if !ok {
					continue
				}
				a := datapath.L3n4Addr{Addr: addr.Unmap(), Port: p.Port, Proto: proto}
				if name != "" {
					byPort[a] = append(byPort[a], name)
				} else if _, seen := byPort[a]; !seen {
					byPort[a] = nil
				}
			}
			for a, names := range byPort {
				slices.Sort(names)
				out = append(out, svcmanager.Backend{Addr: a, PortNames: names, Condition: svcmanager.Ready,
					ClusterID: cs.ClusterID})
			}
		}
	}
	return out
}
