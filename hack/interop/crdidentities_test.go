package interop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"net/netip"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	ciliumallocator "github.com/cilium/cilium/pkg/allocator"
	"github.com/cilium/cilium/pkg/identity/key"
	"github.com/cilium/cilium/pkg/idpool"
	ciliumv2 "github.com/cilium/cilium/pkg/k8s/apis/cilium.io/v2"
	versioned "github.com/cilium/cilium/pkg/k8s/client/clientset/versioned"
	"github.com/cilium/cilium/pkg/k8s/identitybackend"
	ciliumlabels "github.com/cilium/cilium/pkg/labels"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/k8s/k8stest"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/cells/statedir"
	"github.com/apiary-net/apiary/datapath/endpoint"
	"github.com/apiary-net/apiary/datapath/endpoint/cepsync"
	"github.com/apiary-net/apiary/kvstore/kvstorecell"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/identity/identitycell"
	"github.com/apiary-net/apiary/policy/ipcache/k8scep"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// ciliumCache records what Cilium's CRD backend's informer delivers.
type ciliumCache struct {
	listed atomic.Bool
}

func (c *ciliumCache) OnListDone()                                      { c.listed.Store(true) }
func (c *ciliumCache) OnUpsert(idpool.ID, ciliumallocator.AllocatorKey) {}
func (c *ciliumCache) OnDelete(idpool.ID, ciliumallocator.AllocatorKey) {}

// TestCiliumSharesCRDIdentities: in identity allocation mode crd, an
// identity an apiary agent creates is one Cilium's own CRD backend
// (pkg/k8s/identitybackend) finds for the same labels, decoded by
// Cilium's typed client with the metadata labels Cilium sets; an identity
// Cilium's backend creates is the one apiary allocates for its labels.
func TestCiliumSharesCRDIdentities(t *testing.T) {
	kube := k8stest.Start(t)
	kube.InstallCRDs()
	var alloc identity.Allocator
	celltest.StartWithFlags(t, []string{"node-name=node-1", "node-ip=192.0.2.11", "cluster-name=c1", "cluster-id=1",
		"state-dir=" + t.TempDir(), "k8s-kubeconfig-path=" + kube.WriteKubeconfig(k8stest.AdminToken)},
		localnode.Cell, statedir.Cell, kvstorecell.Cell, k8s.Cell, identitycell.Cell, celltest.Capture(&alloc))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	web := labels.FromSlice([]labels.Label{labels.New("k8s", "app", "web"), labels.New("k8s", labels.KeyPodNamespace, "shop")})
	ours, _, err := alloc.AllocateIdentity(ctx, web)
	if err != nil {
		t.Fatal(err)
	}

	cs, err := versioned.NewForConfig(kube.AdminConfig())
	if err != nil {
		t.Fatal(err)
	}
	ci, err := cs.CiliumV2().CiliumIdentities().Get(ctx, ours.ID.String(), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Cilium's client reads apiary's CiliumIdentity: %v", err)
	}
	want := ciliumlabels.NewLabelsFromModel([]string{"k8s:app=web", "k8s:io.kubernetes.pod.namespace=shop",
		"k8s:io.cilium.k8s.policy.cluster=c1"})
	if !maps.Equal(ci.SecurityLabels, want.StringMap()) {
		t.Errorf("security-labels %v, want Cilium's %v", ci.SecurityLabels, want.StringMap())
	}
	if !maps.Equal(ci.Labels, identitybackend.SelectK8sLabels(ci.SecurityLabels)) {
		t.Errorf("metadata labels %v, want Cilium's %v", ci.Labels, identitybackend.SelectK8sLabels(ci.SecurityLabels))
	}

	keyFunc := (&key.GlobalIdentity{}).PutKeyFromMap
	backend, err := identitybackend.NewCRDBackend(slog.New(slog.DiscardHandler), identitybackend.CRDBackendConfiguration{
		StoreSet: &atomic.Bool{}, Client: cs, KeyFunc: keyFunc})
	if err != nil {
		t.Fatal(err)
	}
	handler := &ciliumCache{}
	go backend.ListAndWatch(ctx, handler)
	celltest.Eventually(t, "Cilium's CRD backend listed the identities", handler.listed.Load)
	got, err := backend.Get(ctx, keyFunc(want.StringMap()))
	if err != nil || uint64(got) != uint64(ours.ID) {
		t.Fatalf("Cilium's backend finds %d (%v) for apiary's labels, want %d", got, err, ours.ID)
	}

	// Cilium's backend creates one; apiary allocates that one.
	first, _ := identity.ClusterRange(clusterInfo("c1", 1))
	api := ciliumlabels.NewLabelsFromModel([]string{"k8s:app=api", "k8s:io.kubernetes.pod.namespace=shop",
		"k8s:io.cilium.k8s.policy.cluster=c1"})
	if _, err := backend.AllocateID(ctx, idpool.ID(first+7), keyFunc(api.StringMap())); err != nil {
		t.Fatalf("Cilium's backend creates an identity: %v", err)
	}
	celltest.Eventually(t, "apiary learns Cilium's identity", func() bool {
		return alloc.LookupIdentityByID(first+7) != nil
	})
	theirs, isNew, err := alloc.AllocateIdentity(ctx, labels.FromSlice([]labels.Label{labels.New("k8s", "app", "api"),
		labels.New("k8s", labels.KeyPodNamespace, "shop")}))
	if err != nil || theirs.ID != first+7 || isNew {
		t.Fatalf("apiary allocates %v (new %v, %v) for Cilium's labels, want %d", theirs, isNew, err, first+7)
	}
}

// TestCiliumEndpointShape: the CiliumEndpoint status apiary writes
// decodes strictly with Cilium's types into the fields Cilium's agent
// reads, and one written with Cilium's types decodes with apiary's
// reader.
func TestCiliumEndpointShape(t *testing.T) {
	ep := endpoint.Endpoint{ID: 12, Identity: 84036, IPv4: netip.MustParseAddr("10.0.1.5"), IPv6: netip.MustParseAddr("fd00::5"),
		State: endpoint.StateReady, Pod: endpoint.PodName{Namespace: "shop", Name: "web-1"}, ContainerID: "c0ffee",
		NamedPorts: []policyapi.NamedPort{{Name: "http", Port: 8080, Protocol: "TCP"}},
		Labels:     labels.FromSlice([]labels.Label{labels.New("k8s", labels.KeyServiceAccount, "web-sa")})}
	status := cepsync.Status(ep, "192.0.2.11", labels.FromSlice([]labels.Label{labels.New("k8s", "app", "web")}))
	raw, err := json.Marshal(map[string]any{"apiVersion": "cilium.io/v2", "kind": "CiliumEndpoint",
		"metadata": map[string]any{"name": "web-1", "namespace": "shop"}, "status": status})
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var theirs ciliumv2.CiliumEndpoint
	if err := dec.Decode(&theirs); err != nil {
		t.Fatalf("Cilium's types decode apiary's CiliumEndpoint: %v", err)
	}
	st := theirs.Status
	if st.ID != 12 || st.Identity == nil || st.Identity.ID != 84036 || !slices.Equal(st.Identity.Labels, []string{"k8s:app=web"}) ||
		st.Networking == nil || st.Networking.NodeIP != "192.0.2.11" || len(st.Networking.Addressing) != 1 ||
		st.Networking.Addressing[0].IPV4 != "10.0.1.5" || st.Networking.Addressing[0].IPV6 != "fd00::5" || st.State != "ready" ||
		len(st.NamedPorts) != 1 || st.NamedPorts[0].Name != "http" || st.NamedPorts[0].Port != 8080 || st.NamedPorts[0].Protocol != "TCP" ||
		st.ServiceAccount != "web-sa" || st.ExternalIdentifiers == nil || st.ExternalIdentifiers.ContainerID != "c0ffee" ||
		st.ExternalIdentifiers.PodName != "shop/web-1" {
		t.Fatalf("Cilium reads status %+v", st)
	}

	// Cilium's own, through JSON as the API server hands it out.
	raw, err = json.Marshal(&theirs)
	if err != nil {
		t.Fatal(err)
	}
	var obj unstructured.Unstructured
	if err := obj.UnmarshalJSON(raw); err != nil {
		t.Fatal(err)
	}
	got, err := k8scep.Decode(&obj)
	if err != nil {
		t.Fatalf("apiary decodes Cilium's CiliumEndpoint: %v", err)
	}
	if got.Identity != 84036 || got.Node != netip.MustParseAddr("192.0.2.11") || len(got.Prefixes) != 2 ||
		got.Metadata.K8sNamespace != "shop" || got.Metadata.K8sPodName != "web-1" || len(got.Metadata.NamedPorts) != 1 ||
		got.Metadata.K8sServiceAccount != "web-sa" {
		t.Fatalf("apiary decodes %+v", got)
	}
}

func clusterInfo(name string, id uint32) cluster.Info {
	return cluster.Info{ClusterName: name, ClusterID: id, MaxConnectedClusters: 255}
}
