package interop

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/cilium/hive/cell"
	"github.com/spf13/pflag"

	"github.com/cilium/cilium/api/v1/kvstoremesh/server/restapi/cluster"
	"github.com/cilium/cilium/api/v1/models"
	cmcommon "github.com/cilium/cilium/clustermesh-apiserver/common"
	cmkvstoremesh "github.com/cilium/cilium/clustermesh-apiserver/kvstoremesh"
	"github.com/cilium/cilium/pkg/hive"
	"github.com/cilium/cilium/pkg/metrics"
	"github.com/cilium/cilium/pkg/option"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
)

// KVStoreMesh is Cilium's KVStoreMesh, as `clustermesh-apiserver
// kvstoremesh` runs it: hive.New(common.Cell, kvstoremesh.Cell).
type KVStoreMesh struct {
	handler cluster.GetClusterHandler
}

// StartKVStoreMesh runs Cilium's KVStoreMesh of cluster name/id with
// local as its own etcd and one remote cluster per entry of remotes
// (cluster name -> its etcd), as clustermesh config files in a
// directory. It stops when the test ends.
func StartKVStoreMesh(t *testing.T, name string, id int, local *kvstoretest.Server, remotes map[string]*kvstoretest.Server) *KVStoreMesh {
	t.Helper()
	dir := t.TempDir()
	cfgDir := filepath.Join(dir, "clustermesh")
	if err := os.Mkdir(cfgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for remote, srv := range remotes {
		data, err := os.ReadFile(srv.WriteConfigFile())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(cfgDir, remote), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}

	km := &KVStoreMesh{}
	h := hive.New(cmcommon.Cell, cmkvstoremesh.Cell,
		cell.Invoke(func(h cluster.GetClusterHandler) { km.handler = h }))
	flags := pflag.NewFlagSet("kvstoremesh", pflag.ContinueOnError)
	h.RegisterFlags(flags)
	if err := flags.Parse([]string{
		"--cluster-name=" + name, "--cluster-id=" + itoa(id),
		"--kvstore=etcd", "--kvstore-opt=etcd.config=" + local.WriteConfigFile(),
		"--clustermesh-config=" + cfgDir,
		// Nothing listens on fixed ports or paths.
		"--api-serve-addr=127.0.0.1:0", "--health-port=0", "--prometheus-serve-addr=",
		"--enable-gops=false", "--shell-sock-path=" + filepath.Join(dir, "shell.sock"),
	}); err != nil {
		t.Fatalf("kvstoremesh flags: %v", err)
	}
	// What the command's PreRun does, logging aside.
	metrics.Namespace = metrics.CiliumKVStoreMeshNamespace
	log := celltest.Logger(t)
	option.Config.Populate(log, h.Viper())

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := h.Start(log, ctx); err != nil {
		t.Fatalf("start kvstoremesh: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := h.Stop(log, ctx); err != nil {
			t.Errorf("stop kvstoremesh: %v", err)
		}
	})
	return km
}

// Status is what KVStoreMesh's API answers on GET /cluster (what
// `clustermesh-apiserver kvstoremesh-dbg status` shows).
func (km *KVStoreMesh) Status() []*models.RemoteCluster {
	resp := km.handler.Handle(cluster.GetClusterParams{})
	ok, _ := resp.(*cluster.GetClusterOK)
	if ok == nil {
		return nil
	}
	return ok.Payload
}

func itoa(i int) string { return strconv.Itoa(i) }
