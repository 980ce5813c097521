package k8stest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// CRDDir returns the repository's CRD directory, install/kubernetes/crds.
func CRDDir() (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "install", "kubernetes", "crds"), nil
}

// InstallCRDs creates the CustomResourceDefinitions of every *.yaml file
// of install/kubernetes/crds and waits until each is established and
// served.
func (s *Server) InstallCRDs() {
	s.t.Helper()
	dir, err := CRDDir()
	if err != nil {
		s.t.Fatalf("k8stest: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if len(files) == 0 {
		s.t.Fatalf("k8stest: no CRD in %s", dir)
	}
	for _, f := range files {
		if err := s.installCRD(f); err != nil {
			s.t.Fatalf("k8stest: %v", err)
		}
	}
}

func (s *Server) installCRD(file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var obj map[string]any
	if err := yaml.Unmarshal(data, &obj); err != nil {
		return fmt.Errorf("decode %s: %w", file, err)
	}
	crd := &unstructured.Unstructured{Object: obj}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dyn := s.Dynamic()
	if _, err := dyn.Resource(crdResource).Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create CRD of %s: %w", file, err)
	}
	group, _, _ := unstructured.NestedString(obj, "spec", "group")
	plural, _, _ := unstructured.NestedString(obj, "spec", "names", "plural")
	versions, _, _ := unstructured.NestedSlice(obj, "spec", "versions")
	version := ""
	if len(versions) > 0 {
		version, _, _ = unstructured.NestedString(versions[0].(map[string]any), "name")
	}
	gvr := schema.GroupVersionResource{Group: group, Version: version, Resource: plural}
	for {
		_, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("CRD %s not served: %w", gvr, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
