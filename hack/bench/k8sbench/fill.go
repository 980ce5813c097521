package k8sbench

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	k8sclient "github.com/apiary-net/apiary/cells/k8s"
)

// LocalNode is the name of the node both sides run on: pods whose
// spec.nodeName it is are the ones they list.
const LocalNode = "bench-node-0"

// Size is what the API server holds.
type Size struct {
	// Pods in total; LocalPods of them are on LocalNode, the rest spread
	// over the other nodes.
	Pods, LocalPods int
	Namespaces      int
	Nodes           int
	// Policies: half NetworkPolicies, 4/10 CiliumNetworkPolicies, the
	// rest CiliumClusterwideNetworkPolicies.
	Policies int
}

// Full is the benchmark's size: every pod on this node, so that both sides
// sync 10,000 of them.
var Full = Size{Pods: 10000, LocalPods: 10000, Namespaces: 1000, Nodes: 100, Policies: 1000}

// Kinds returns how many NPs, CNPs and CCNPs s.Policies splits into.
func (s Size) Kinds() (nps, cnps, ccnps int) {
	nps = s.Policies / 2
	cnps = s.Policies * 4 / 10
	return nps, cnps, s.Policies - nps - cnps
}

// Validate checks the sizes.
func (s Size) Validate() error {
	switch {
	case s.Namespaces < 1:
		return fmt.Errorf("namespaces: %d, want >= 1", s.Namespaces)
	case s.Nodes < 1:
		return fmt.Errorf("nodes: %d, want >= 1", s.Nodes)
	case s.Pods < 0:
		return fmt.Errorf("pods: %d, want >= 0", s.Pods)
	case s.Policies < 0:
		return fmt.Errorf("policies: %d, want >= 0", s.Policies)
	case s.LocalPods < 0 || s.LocalPods > s.Pods:
		return fmt.Errorf("local-pods: %d, want 0..%d", s.LocalPods, s.Pods)
	case s.LocalPods < s.Pods && s.Nodes < 2:
		return fmt.Errorf("nodes: %d, want >= 2 for pods on other nodes", s.Nodes)
	}
	return nil
}

// fillWorkers is how many creates are in flight at once.
const fillWorkers = 32

// Fill creates s's objects with parallel creates (the CRDs must be
// installed).
func Fill(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, s Size) error {
	steps := []struct {
		what string
		n    int
		fn   func(ctx context.Context, i int) error
	}{
		{"namespace", s.Namespaces, func(ctx context.Context, i int) error {
			_, err := cs.CoreV1().Namespaces().Create(ctx, namespace(i), metav1.CreateOptions{})
			return err
		}},
		{"node", s.Nodes, func(ctx context.Context, i int) error {
			_, err := cs.CoreV1().Nodes().Create(ctx, node(i), metav1.CreateOptions{})
			return err
		}},
		{"pod", s.Pods, func(ctx context.Context, i int) error {
			p := pod(i, s)
			_, err := cs.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
			return err
		}},
		{"policy", s.Policies, func(ctx context.Context, i int) error { return createPolicy(ctx, cs, dyn, i, s) }},
	}
	for _, st := range steps {
		if err := parallel(ctx, st.n, st.fn); err != nil {
			return fmt.Errorf("create %s: %w", st.what, err)
		}
	}
	return nil
}

// parallel runs fn(0..n-1) on fillWorkers goroutines and returns the
// first error.
func parallel(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range fillWorkers {
		wg.Go(func() {
			for i := range next {
				if err := fn(ctx, i); err != nil {
					cancel(fmt.Errorf("object %d: %w", i, err))
				}
			}
		})
	}
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	return context.Cause(ctx)
}

func nsName(i int) string { return fmt.Sprintf("ns-%04d", i) }

func nodeName(i int) string { return fmt.Sprintf("bench-node-%d", i) }

func app(i int) string { return fmt.Sprintf("app-%d", i%50) }

func namespace(i int) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nsName(i),
		Labels: map[string]string{"team": fmt.Sprintf("team-%d", i%10), "env": []string{"prod", "staging", "dev"}[i%3]}}}
}

func node(i int) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: nodeName(i), Labels: map[string]string{
			"kubernetes.io/hostname": nodeName(i), "kubernetes.io/os": "linux", "topology.kubernetes.io/zone": fmt.Sprintf("zone-%d", i%3)}},
		Spec: corev1.NodeSpec{PodCIDR: fmt.Sprintf("10.%d.%d.0/24", 1+i/256, i%256)},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("192.168.%d.%d", i/256, 1+i%254)},
			{Type: corev1.NodeHostName, Address: nodeName(i)},
		}},
	}
}

// pod is pod i: namespace i mod Namespaces, on LocalNode for the first
// LocalPods, else on one of the other nodes; a pod of the size a
// Deployment's usually has (labels, one container with ports, resources,
// a probe).
func pod(i int, s Size) *corev1.Pod {
	nodeIdx := 0
	if i >= s.LocalPods {
		nodeIdx = 1 + i%(s.Nodes-1)
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: nsName(i % s.Namespaces), Name: fmt.Sprintf("pod-%05d", i),
			Labels: map[string]string{"app": app(i), "pod-template-hash": fmt.Sprintf("%08x", i*2654435761%(1<<32)), "tier": []string{"web", "api", "db"}[i%3]},
		},
		Spec: corev1.PodSpec{
			NodeName:           nodeName(nodeIdx),
			ServiceAccountName: app(i),
			Containers: []corev1.Container{{
				Name: "main", Image: "registry.invalid/" + app(i) + ":v1",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
				Env:   []corev1.EnvVar{{Name: "APP", Value: app(i)}, {Name: "LOG_LEVEL", Value: "info"}},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
					Path: "/healthz", Port: intstr.FromString("http")}}},
			}},
		},
	}
}

// createPolicy creates policy i: an NP, a CNP or a CCNP (see Size.Kinds),
// each allowing one app to reach another on TCP 8080.
func createPolicy(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, i int, s Size) error {
	nps, cnps, _ := s.Kinds()
	ns := nsName(i % s.Namespaces)
	switch {
	case i < nps:
		_, err := cs.NetworkingV1().NetworkPolicies(ns).Create(ctx, networkPolicy(ns, i), metav1.CreateOptions{})
		return err
	case i < nps+cnps:
		_, err := dyn.Resource(k8sclient.CNPResource).Namespace(ns).Create(ctx, ciliumPolicy("CiliumNetworkPolicy", ns, i), metav1.CreateOptions{})
		return err
	default:
		_, err := dyn.Resource(k8sclient.CCNPResource).Create(ctx, ciliumPolicy("CiliumClusterwideNetworkPolicy", "", i), metav1.CreateOptions{})
		return err
	}
}

func networkPolicy(ns string, i int) *networkingv1.NetworkPolicy {
	tcp := corev1.ProtocolTCP
	port := intstr.FromInt32(8080)
	return &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("np-%04d", i)},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": app(i)}},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From:  []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app(i + 1)}}}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &port}},
			}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
		},
	}
}

func ciliumPolicy(kind, ns string, i int) *unstructured.Unstructured {
	meta := map[string]any{"name": fmt.Sprintf("cnp-%04d", i)}
	if ns != "" {
		meta["namespace"] = ns
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cilium.io/v2", "kind": kind, "metadata": meta,
		"spec": map[string]any{
			"endpointSelector": map[string]any{"matchLabels": map[string]any{"app": app(i)}},
			"ingress": []any{map[string]any{
				"fromEndpoints": []any{map[string]any{"matchLabels": map[string]any{"app": app(i + 1)}}},
				"toPorts":       []any{map[string]any{"ports": []any{map[string]any{"port": "8080", "protocol": "TCP"}}}},
			}},
		},
	}}
}
