package k8scluster

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	removeBinaries()
	os.Exit(code)
}
