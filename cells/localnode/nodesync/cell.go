package nodesync

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/localnode"
)

// Cell provides the localnode.NodeSource and, with Kubernetes, watches
// this node's Node for its zone label and (with --ipam=kubernetes) its
// spec.podCIDRs. --ipam=kubernetes
// without a Kubernetes API server stops the agent at start.
var Cell = cell.Module("local-node-sync", "This node's pod CIDRs, addresses and zone from its Kubernetes Node",
	cell.Provide(newNodeSource),
	cell.Invoke(startWatcher),
)

// ErrNoKubernetes: --ipam=kubernetes needs the API server.
var ErrNoKubernetes = errors.New("--ipam=kubernetes: Kubernetes is not configured (set --k8s-kubeconfig-path or --k8s-api-server, or run in a pod), or use --ipam=static with --pod-cidr")

// newNodeSource reads Node objects with the agent's client.
func newNodeSource(cfg localnode.Config, cs k8s.Clientset) (localnode.NodeSource, error) {
	if cfg.IPAM == localnode.IPAMKubernetes && !cs.IsEnabled() {
		return nil, &cell.ConfigError{Err: ErrNoKubernetes}
	}
	return source{cs}, nil
}

type source struct{ cs k8s.Clientset }

// Node implements localnode.NodeSource with one GET.
func (s source) Node(ctx context.Context, name string) (localnode.KubernetesNode, error) {
	if !s.cs.IsEnabled() {
		return localnode.KubernetesNode{}, ErrNoKubernetes
	}
	var n corev1.Node
	err := s.cs.CoreV1().Get().Resource("nodes").Name(name).
		VersionedParams(&metav1.GetOptions{}, metav1.ParameterCodec).Do(ctx).Into(&n)
	if err != nil {
		return localnode.KubernetesNode{}, fmt.Errorf("get node %s: %w", name, err)
	}
	return Convert(&n), nil
}

// Convert returns what the local-node store takes from a Node: its
// InternalIP then ExternalIP addresses (unparsable ones left out) and
// its pod CIDRs (spec.podCIDRs, or the older spec.podCIDR).
func Convert(n *corev1.Node) localnode.KubernetesNode {
	var k localnode.KubernetesNode
	for _, t := range []corev1.NodeAddressType{corev1.NodeInternalIP, corev1.NodeExternalIP} {
		for _, a := range n.Status.Addresses {
			if ip, err := netip.ParseAddr(a.Address); a.Type == t && err == nil {
				k.Addresses = append(k.Addresses, ip.Unmap())
			}
		}
	}
	k.PodCIDRs = slices.Clone(n.Spec.PodCIDRs)
	if len(k.PodCIDRs) == 0 && n.Spec.PodCIDR != "" {
		k.PodCIDRs = []string{n.Spec.PodCIDR}
	}
	return k
}

type watcherParams struct {
	cell.In

	Config    localnode.Config
	Clientset k8s.Clientset
	Nodes     k8s.Nodes
	Local     localnode.Store
	Jobs      job.Group
	Log       *slog.Logger
}

// startWatcher adds the jobs that give the store the Node's zone and
// whether it is being deleted (with Kubernetes), and its pod CIDRs
// (--ipam=kubernetes).
func startWatcher(p watcherParams) {
	if p.Clientset.IsEnabled() {
		p.Jobs.Add(job.OneShot("local-node-zone", func(ctx context.Context, health cell.Health) error {
			name := p.Local.Get().Name
			health.OK("following the zone label and the deletion of node " + name)
			for ev := range p.Nodes.Events(ctx) {
				switch {
				case ev.Key.Name != name:
				case ev.Kind == k8s.Upsert:
					setZone(p.Local, p.Log, ev.Object)
					setBeingDeleted(p.Local, p.Log, name, beingDeleted(ev.Object))
				case ev.Kind == k8s.Delete:
					setBeingDeleted(p.Local, p.Log, name, true)
				}
			}
			return nil
		}))
	}
	if p.Config.IPAM != localnode.IPAMKubernetes || !p.Clientset.IsEnabled() {
		return
	}
	p.Jobs.Add(job.OneShot("local-node-pod-cidrs", func(ctx context.Context, health cell.Health) error {
		name := p.Local.Get().Name
		w := watcher{local: p.Local, log: p.Log, health: health}
		w.report(name)
		for ev := range p.Nodes.Events(ctx) {
			if ev.Kind == k8s.Upsert && ev.Key.Name == name {
				w.upsert(ev.Object)
			}
		}
		return nil
	}))
}

// ToBeDeletedTaint is the cluster autoscaler's taint of a node it is
// about to delete (kube-proxy's ToBeDeletedTaint).
const ToBeDeletedTaint = "ToBeDeletedByClusterAutoscaler"

// beingDeleted reports whether Node k is on its way out: a
// deletionTimestamp, or the autoscaler's taint (kube-proxy's rule).
func beingDeleted(k *corev1.Node) bool {
	if k.DeletionTimestamp != nil {
		return true
	}
	for _, t := range k.Spec.Taints {
		if t.Key == ToBeDeletedTaint {
			return true
		}
	}
	return false
}

// setBeingDeleted gives the store whether its Node is being deleted when
// that changed.
func setBeingDeleted(local localnode.Store, log *slog.Logger, name string, deleted bool) {
	if local.Get().BeingDeleted == deleted {
		return
	}
	log.Info("Node being deleted", "node", name, "beingDeleted", deleted)
	local.Update(func(n *localnode.LocalNode) { n.BeingDeleted = deleted })
}

// setZone gives the store the zone label of its Node k when it changed.
func setZone(local localnode.Store, log *slog.Logger, k *corev1.Node) {
	zone := k.Labels[corev1.LabelTopologyZone]
	if local.Get().Zone == zone {
		return
	}
	log.Info("Node zone", "node", k.Name, "zone", zone)
	local.Update(func(n *localnode.LocalNode) { n.Zone = zone })
}
