package agent

import (
	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/controller"
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/localnode/nodesync"
	"github.com/apiary-net/apiary/cells/metrics"
	"github.com/apiary-net/apiary/cells/statedir"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/clustermesh/clustermeshcell"
	"github.com/apiary-net/apiary/clustermesh/publish"
	"github.com/apiary-net/apiary/clustermesh/service/k8ssvc"
	"github.com/apiary-net/apiary/clustermesh/service/svcpublish"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/bpfapi"
	"github.com/apiary-net/apiary/datapath/ctgc"
	"github.com/apiary-net/apiary/datapath/endpoint/cepsync"
	"github.com/apiary-net/apiary/datapath/endpoint/endpointcell"
	"github.com/apiary-net/apiary/datapath/endpoint/k8spods"
	"github.com/apiary-net/apiary/datapath/hubble/hubblecell"
	"github.com/apiary-net/apiary/datapath/ipcachesync"
	"github.com/apiary-net/apiary/datapath/linux"
	"github.com/apiary-net/apiary/datapath/loader/loadercell"
	"github.com/apiary-net/apiary/datapath/monitor/monitorcell"
	"github.com/apiary-net/apiary/datapath/node/k8snodes"
	"github.com/apiary-net/apiary/datapath/node/nodecell"
	"github.com/apiary-net/apiary/datapath/noderoute"
	"github.com/apiary-net/apiary/datapath/svcmanager/hostport"
	"github.com/apiary-net/apiary/datapath/svcmanager/svcmanagercell"
	"github.com/apiary-net/apiary/datapath/tunnel"
	"github.com/apiary-net/apiary/kvstore/kvstorecell"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/identity/identitycell"
	"github.com/apiary-net/apiary/policy/ipcache/ipcachecell"
	"github.com/apiary-net/apiary/policy/ipcache/k8scep"
	"github.com/apiary-net/apiary/policy/k8spolicy"
	"github.com/apiary-net/apiary/policy/policycell"
)

// Infrastructure are the cells every agent needs: its identity, state
// directory, REST API, metrics and status collector. Their order is the
// order of the lines of `apiary status`.
var Infrastructure = cell.Group(
	Info,
	controller.Cell,
	localnode.Cell,
	statedir.Cell,
	api.Cell,
	metrics.Cell,
	status.Cell,
)

// ControlPlane are the cells that share state with other agents, and
// the Kubernetes client (disabled outside Kubernetes) and watchers.
var ControlPlane = cell.Group(
	k8s.Cell,
	nodesync.Cell, // this node's zone from its Node; --ipam=kubernetes: its pod CIDRs
	kvstorecell.Cell,
	store.Cell,
	identitycell.Cell,
	policycell.Cell,
	k8spolicy.Cell, // NetworkPolicy, CNP, CCNP from Kubernetes
	ipcachecell.Cell,
	k8scep.Cell, // other nodes' CiliumEndpoints -> ipcache (identity mode crd)
	nodecell.Cell,
	k8snodes.Cell, // nodes from Kubernetes
)

// Datapath are the cells that plumb this node's endpoints and routes
// and enforce policy: the Linux plumbing, the routes to other nodes' pod
// CIDRs (--auto-direct-node-routes), the BPF loader (programs, policy
// maps), the ipcache map sync, the conntrack GC and the endpoint
// manager.
var Datapath = cell.Group(
	tunnel.Cell, // --routing-mode: native or a VXLAN tunnel
	linux.Cell,
	noderoute.Cell,
	loadercell.Cell,
	ipcachesync.Cell,
	ctgc.Cell,
	endpointcell.Cell,
	k8spods.Cell,                  // endpoint labels from Kubernetes pods
	cepsync.Cell,                  // this node's endpoints -> CiliumEndpoints (identity mode crd)
	monitorcell.Cell, bpfapi.Cell, // apiary monitor, apiary bpf ... (read the maps of loadercell.Cell)
	svcmanagercell.Cell, // services -> load-balancing frontends (writes through a datapath.LBMapWriter when the hive has one)
	hostport.Cell,       // this node's pods' hostPorts -> HostPort frontends (--enable-host-port)
	hubblecell.Cell,     // --enable-hubble: Hubble's gRPC API (flows of monitorcell's events)
)

// ClusterMesh are the cells that mesh this cluster with others: the
// elected publisher of our cluster config and sync canaries, and the
// connections to the remote clusters of --clustermesh-config.
var ClusterMesh = cell.Group(
	publish.Cell,
	clustermeshcell.Cell,
	k8ssvc.Cell,     // global services from Kubernetes, published by the publisher
	svcpublish.Cell, // without Kubernetes: the global services of --lb-state-file, published by the publisher
	// The BPF ipcache map's initial reconcile and the endpoints' first
	// regeneration wait for the remotes too.
	cell.Provide(func(w clustermeshcell.SyncWaiter) datapath.RemoteSync { return w }),
)

// Agent is the whole apiary agent.
var Agent = cell.Group(
	Infrastructure,
	ControlPlane,
	Datapath,
	ClusterMesh,
	CNIConf,
)
