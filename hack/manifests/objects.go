package manifests

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	// sigs.k8s.io/yaml decodes the Kubernetes objects (JSON tags, strict);
	// go.yaml.in/yaml/v3, apiary's own YAML library, splits a file into
	// its documents, which sigs.k8s.io/yaml cannot.
	yamlv3 "go.yaml.in/yaml/v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// InstallDir is the directory of the install manifests, relative to the
// repository root.
const InstallDir = "install/kubernetes"

// Object is one decoded manifest object.
type Object struct {
	// File and Index say where it is: the file and the document's
	// position in it (from 0).
	File  string
	Index int
	// Kind is its apiVersion and kind ("apps/v1 DaemonSet").
	Kind string
	// Value is the typed object.
	Value any
}

// newTyped returns an empty object of the API type of apiVersion and kind.
func newTyped(apiVersion, kind string) (any, bool) {
	switch apiVersion + " " + kind {
	case "v1 ServiceAccount":
		return &corev1.ServiceAccount{}, true
	case "v1 ConfigMap":
		return &corev1.ConfigMap{}, true
	case "apps/v1 DaemonSet":
		return &appsv1.DaemonSet{}, true
	case "rbac.authorization.k8s.io/v1 ClusterRole":
		return &rbacv1.ClusterRole{}, true
	case "rbac.authorization.k8s.io/v1 ClusterRoleBinding":
		return &rbacv1.ClusterRoleBinding{}, true
	case "apiextensions.k8s.io/v1 CustomResourceDefinition":
		return &apiextv1.CustomResourceDefinition{}, true
	}
	return nil, false
}

// LoadInstall decodes every object of every YAML file under dir (the
// install manifests) strictly: a field the API type does not have, a
// kind the install does not use, or a document that is not an object is
// an error naming the file and document.
func LoadInstall(dir string) ([]Object, error) {
	var (
		out  []Object
		errs []error
	)
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			return err
		}
		objs, err := decodeFile(path)
		out = append(out, objs...)
		if err != nil {
			errs = append(errs, err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	return out, errors.Join(errs...)
}

func decodeFile(path string) ([]Object, error) {
	docs, err := splitYAML(path)
	if err != nil {
		return nil, err
	}
	var (
		out  []Object
		errs []error
	)
	for i, doc := range docs {
		var tm struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			errs = append(errs, fmt.Errorf("%s document %d: %w", path, i, err))
			continue
		}
		v, ok := newTyped(tm.APIVersion, tm.Kind)
		if !ok {
			errs = append(errs, fmt.Errorf("%s document %d: %q %q is not a kind of the install", path, i, tm.APIVersion, tm.Kind))
			continue
		}
		if err := yaml.UnmarshalStrict(doc, v); err != nil {
			errs = append(errs, fmt.Errorf("%s document %d (%s): %w", path, i, tm.Kind, err))
			continue
		}
		out = append(out, Object{File: path, Index: i, Kind: tm.APIVersion + " " + tm.Kind, Value: v})
	}
	return out, errors.Join(errs...)
}

// splitYAML returns the non-empty documents of a YAML file, each
// re-encoded on its own.
func splitYAML(path string) ([][]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	var out [][]byte
	for i := 0; ; i++ {
		var n yamlv3.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s document %d: %w", path, i, err)
		}
		if len(n.Content) == 0 || n.Content[0].Kind == yamlv3.ScalarNode && n.Content[0].Tag == "!!null" {
			continue
		}
		doc, err := yamlv3.Marshal(&n)
		if err != nil {
			return nil, fmt.Errorf("%s document %d: %w", path, i, err)
		}
		out = append(out, doc)
	}
}
