package hubblecell

import (
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/datapath/endpoint"
	"github.com/apiary-net/apiary/datapath/hubble"
	"github.com/apiary-net/apiary/datapath/loader"
	"github.com/apiary-net/apiary/datapath/monitor"
	"github.com/apiary-net/apiary/datapath/node"
	"github.com/apiary-net/apiary/datapath/svcmanager"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/ipcache"
)

// Cell runs Hubble's observer when --enable-hubble is set. It needs the
// monitor (monitorcell), the identity cache and the local node; the
// endpoint manager and the ipcache, when present, name the pods, and the
// service manager the services.
var Cell = cell.Module("hubble", "Hubble observer: flows of the datapath's events on Hubble's gRPC API",
	cell.Config(DefaultConfig),
	cell.ProvidePrivate(newPeers),
	cell.Provide(newServer, newStatusProvider, newPeerHandler),
	cell.Invoke(func(*server) {}),
)

type params struct {
	cell.In

	Config     Config
	Lifecycle  cell.Lifecycle
	Log        *slog.Logger
	Monitor    monitor.Subscriber
	Identities identity.Allocator
	Node       localnode.Store
	Peers      *hubble.Peers
	Endpoints  *endpoint.Manager   `optional:"true"`
	IPCache    ipcache.IPCache     `optional:"true"`
	Clientset  k8s.Clientset       `optional:"true"`
	Pods       k8s.Pods            `optional:"true"`
	Loader     *loader.Loader      `optional:"true"`
	Services   *svcmanager.Manager `optional:"true"`
}

// newServer builds the observer; it listens from start to stop.
func newServer(p params) (*server, error) {
	s := &server{cfg: p.Config, log: p.Log}
	if !p.Config.EnableHubble {
		return s, nil
	}
	metrics := make([]hubble.Metric, 0, len(p.Config.HubbleMetrics))
	for _, m := range p.Config.HubbleMetrics {
		name, err := parseMetric(m)
		if err != nil {
			return nil, fmt.Errorf("--hubble-metrics: %w", err)
		}
		metrics = append(metrics, name)
	}
	local := p.Node.Get()
	nodeName := local.Name
	if local.Cluster.ClusterName != "" {
		nodeName = local.Cluster.ClusterName + "/" + local.Name
	}
	var pods k8s.Pods
	if p.Clientset != nil && p.Clientset.IsEnabled() {
		pods = p.Pods
	}
	s.ring = hubble.NewRing(p.Config.HubbleEventBufferCapacity)
	s.parser = &hubble.Parser{
		NodeName: nodeName, ClusterName: local.Cluster.ClusterName, Identities: p.Identities,
		Endpoints: newEndpointIndex(p.Endpoints, p.IPCache, pods),
	}
	if p.Services != nil {
		s.parser.Services = p.Services
		if p.Loader != nil { // translated packets name their service by rev-NAT index
			s.revNATs = &revNATMaps{log: p.Log, root: p.Loader.Root()}
			s.parser.RevNATs = s.revNATs
		}
	}
	s.monitor = p.Monitor
	if p.Loader != nil {
		s.bpfRoot = p.Loader.Root()
	}
	s.metricNames = metrics
	s.observer = &hubble.Observer{Ring: s.ring, NodeName: nodeName, Version: versionString(),
		Address: peerAddress(local.IP.String(), p.Config.HubbleListenAddress)}
	s.peers = p.Peers
	p.Lifecycle.Append(cell.Hook{OnStart: s.start, OnStop: s.stop})
	return s, nil
}

// parseMetric reads one --hubble-metrics entry; Cilium's per-metric
// options ("drop:sourceContext=pod") are refused, not ignored.
func parseMetric(s string) (hubble.Metric, error) {
	name, opts, _ := strings.Cut(s, ":")
	switch m := hubble.Metric(name); m {
	case hubble.MetricFlow, hubble.MetricDrop, hubble.MetricTCP, hubble.MetricPolicy:
		if opts != "" {
			return "", fmt.Errorf("%q: metric options (%s) are not supported", s, opts)
		}
		return m, nil
	}
	return "", fmt.Errorf("%q is not drop, flow, tcp or policy", s)
}

// peerAddress is where a relay reaches this node's observer: the host of
// --hubble-listen-address when it names one, else the node IP, with its
// port (empty without a listen address).
func peerAddress(nodeIP, listen string) string {
	if listen == "" {
		return ""
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return ""
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = nodeIP
	}
	return net.JoinHostPort(host, port)
}

// newPeers is the Peer service's list of nodes, this one in it from the
// start. It depends on no other service, so that the node manager can
// hold its handler (newPeerHandler) without a cycle.
func newPeers(cfg Config, ln localnode.Store) *hubble.Peers {
	peers := hubble.NewPeers()
	local := ln.Get()
	if cfg.EnableHubble && local.IP.IsValid() {
		addr := peerAddress(local.IP.String(), cfg.HubbleListenAddress)
		if addr == "" {
			addr = net.JoinHostPort(local.IP.String(), strconv.Itoa(defaultPeerPort))
		}
		np := hubble.Peer{Address: addr}
		if servesTLS(cfg) {
			np.TLSServerName = tlsServerName(local.Name, local.Cluster.ClusterName)
		}
		peers.Upsert(localPeerName(ln), np)
	}
	return peers
}

// servesTLS reports whether --hubble-listen-address serves TLS (every
// agent of a cluster is expected to be configured alike).
func servesTLS(cfg Config) bool { return cfg.HubbleListenAddress != "" && !cfg.HubbleDisableTLS }

// localPeerName is this node's name in the Peer service.
func localPeerName(ln localnode.Store) string {
	local := ln.Get()
	if local.Cluster.ClusterName != "" {
		return local.Cluster.ClusterName + "/" + local.Name
	}
	return local.Name
}

// newPeerHandler registers the Peer service's list with the node
// manager (none when Hubble is off).
func newPeerHandler(cfg Config, peers *hubble.Peers, ln localnode.Store) node.NodeHandlerOut {
	if !cfg.EnableHubble {
		return node.NodeHandlerOut{}
	}
	return node.NodeHandlerOut{Handler: &peerHandler{peers: peers, port: listenPort(cfg.HubbleListenAddress), self: localPeerName(ln), tls: servesTLS(cfg)}}
}

func newStatusProvider(id cell.FullModuleID, s *server) status.ProviderOut {
	return status.NewProviderOut(id, "Hubble", s.statusReport)
}
