package k8scluster

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
)

// installDir returns install/kubernetes of this repository.
func installDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "install", "kubernetes")
}

// readObjects decodes every document of an install manifest.
func (c *Cluster) readObjects(name string) []any {
	data, err := os.ReadFile(filepath.Join(installDir(), name))
	if err != nil {
		c.t.Fatal(err)
	}
	var objs []any
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if err != nil {
			break
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			c.t.Fatalf("%s: %v", name, err)
		}
		objs = append(objs, obj)
	}
	return objs
}

// applyInstall creates the agent's ServiceAccount and RBAC from the
// install manifests, as `kubectl apply -f install/kubernetes` would.
func (c *Cluster) applyInstall() {
	ctx := context.Background()
	cs := c.API.Clientset()
	for _, file := range []string{"serviceaccount.yaml", "rbac.yaml"} {
		for _, obj := range c.readObjects(file) {
			var err error
			switch o := obj.(type) {
			case *corev1.ServiceAccount:
				_, err = cs.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			case *rbacv1.ClusterRole:
				_, err = cs.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
			case *rbacv1.ClusterRoleBinding:
				_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
			case *rbacv1.Role:
				_, err = cs.RbacV1().Roles(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			case *rbacv1.RoleBinding:
				_, err = cs.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			default:
				err = fmt.Errorf("unexpected object %T", obj)
			}
			if err != nil {
				c.t.Fatalf("apply %s: %v", file, err)
			}
		}
	}
}

// writeConfigDir writes the shipped ConfigMap's data as the agents'
// --config-dir, one file per key, as its volume mount does.
func (c *Cluster) writeConfigDir() string {
	var cm *corev1.ConfigMap
	for _, obj := range c.readObjects("configmap.yaml") {
		if o, ok := obj.(*corev1.ConfigMap); ok {
			cm = o
		}
	}
	if cm == nil {
		c.t.Fatal("install/kubernetes/configmap.yaml has no ConfigMap")
	}
	dir := filepath.Join(c.dir, "config")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		c.t.Fatal(err)
	}
	for k, v := range cm.Data {
		if err := os.WriteFile(filepath.Join(dir, k), []byte(v), 0o644); err != nil {
			c.t.Fatal(err)
		}
	}
	return dir
}
