package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/apiary-net/apiary/hack/manifests"
)

func main() {
	root := "../.."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	for _, crd := range manifests.CRDs() {
		data, err := manifests.RenderCRD(crd)
		if err == nil {
			err = os.WriteFile(filepath.Join(root, manifests.CRDDir, manifests.CRDFile(crd)), data, 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "gen-crds:", err)
			os.Exit(1)
		}
	}
}
