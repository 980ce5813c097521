// Command kvstoremeshside is meshbench's Cilium process: Cilium v1.20's
// KVStoreMesh as `clustermesh-apiserver kvstoremesh` runs it
// (hive.New(common.Cell, kvstoremesh.Cell)), mirroring the remote
// clusters of -clustermesh-config into the etcd of -local-config. It
// reports ready (see package side) once its API's cluster status says
// the remote is ready (connected, every reflector synced into the local
// etcd), timed from the hive's start.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/cilium/hive/cell"
	"github.com/spf13/pflag"

	"github.com/cilium/cilium/api/v1/kvstoremesh/server/restapi/cluster"
	cmcommon "github.com/cilium/cilium/clustermesh-apiserver/common"
	cmkvstoremesh "github.com/cilium/cilium/clustermesh-apiserver/kvstoremesh"
	"github.com/cilium/cilium/pkg/hive"
	"github.com/cilium/cilium/pkg/metrics"
	"github.com/cilium/cilium/pkg/option"

	"github.com/apiary-net/apiary/hack/bench/meshbench/side"
)

func main() {
	localCfg := flag.String("local-config", "", "etcd config file of KVStoreMesh's own etcd")
	meshDir := flag.String("clustermesh-config", "", "directory of remote cluster config files")
	remoteName := flag.String("remote", "cluster2", "the remote cluster to wait for")
	stateDir := flag.String("state-dir", "", "directory for KVStoreMesh's shell socket")
	memProfile := flag.String("memprofile", "", "write a heap profile (after ready and a GC) to this file")
	flag.Parse()

	var handler cluster.GetClusterHandler
	h := hive.New(cmcommon.Cell, cmkvstoremesh.Cell,
		cell.Invoke(func(gh cluster.GetClusterHandler) { handler = gh }))
	flags := pflag.NewFlagSet("kvstoremesh", pflag.ContinueOnError)
	h.RegisterFlags(flags)
	if err := flags.Parse([]string{
		"--cluster-name=cluster1", "--cluster-id=1",
		"--kvstore=etcd", "--kvstore-opt=etcd.config=" + *localCfg,
		"--clustermesh-config=" + *meshDir,
		// Nothing listens on fixed ports or paths.
		"--api-serve-addr=127.0.0.1:0", "--health-port=0", "--prometheus-serve-addr=",
		"--enable-gops=false", "--shell-sock-path=" + filepath.Join(*stateDir, "shell.sock"),
	}); err != nil {
		side.Fail("kvstoremeshside", fmt.Errorf("parse flags: %w", err))
	}
	// What the command's PreRun does, logging aside.
	metrics.Namespace = metrics.CiliumKVStoreMeshNamespace
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	option.Config.Populate(log, h.Viper())

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	begin := time.Now()
	if err := h.Start(log, ctx); err != nil {
		side.Fail("kvstoremeshside", fmt.Errorf("start kvstoremesh: %w", err))
	}
	if err := waitReady(ctx, handler, *remoteName); err != nil {
		side.Fail("kvstoremeshside", err)
	}
	side.Serve(time.Since(begin), *memProfile)
	stop, cancelStop := context.WithTimeout(context.Background(), time.Minute)
	defer cancelStop()
	_ = h.Stop(log, stop)
}

// waitReady polls the API's GET /cluster until name is ready.
func waitReady(ctx context.Context, handler cluster.GetClusterHandler, name string) error {
	for {
		resp, _ := handler.Handle(cluster.GetClusterParams{}).(*cluster.GetClusterOK)
		if resp != nil {
			for _, rc := range resp.Payload {
				if rc.Name == name && rc.Ready {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for %s ready: %w", name, ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
}
