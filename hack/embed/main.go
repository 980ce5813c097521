package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/hive"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/stdhive"
	"github.com/apiary-net/apiary/datapath/svcmanager/svcmanagercell"
	"github.com/apiary-net/apiary/kvstore/kvstorecell"
	"github.com/apiary-net/apiary/policy/identity/identitycell"
	"github.com/apiary-net/apiary/policy/ipcache/ipcachecell"
	"github.com/apiary-net/apiary/policy/policycell"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// cells are apiary's control plane and this program's datapath, which
// writes its map state to out.
func cells(out io.Writer) []cell.Cell {
	return []cell.Cell{
		kvstorecell.Cell,    // etcd client; disabled (standalone) when --kvstore is empty
		localnode.Cell,      // this node and its cluster: --node-name, --node-ip, --cluster-name
		identitycell.Cell,   // identity.Allocator; tells identity observers (the selector cache) of changes
		ipcachecell.Cell,    // ipcache.IPCache; tells ipcache listeners of changes
		policycell.Cell,     // policy.Repository fed from --policy-dir; RegenerationRequests
		datapathCell(out),   // ours: endpoints, map state, ipcache, services printed
		svcmanagercell.Cell, // services of --lb-state-file -> our datapath's LBMapWriter
	}
}

// run runs the program with args and returns its exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	// Built as the agent's hive is: every module gets its own job.Group
	// and controller.Manager (add controller.Cell when a cell uses
	// controllers).
	h := stdhive.New(hive.Options{
		EnvPrefix: "EMBED_", // EMBED_POLICY_DIR=... sets --policy-dir
		LogOutput: stderr,
	}, cells(stdout)...)
	cmd := &cobra.Command{
		Use:           "embed",
		Short:         "apiary's control plane with a datapath that prints its map state",
		Args:          cobra.NoArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return h.Run(ctx) // populate, start, wait for ctx, stop
		},
	}
	h.RegisterFlags(cmd.Flags()) // every cell's flags, --policy-dir and --endpoint among them
	cmd.SetArgs(args)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	if err := cmd.ExecuteContext(ctx); err != nil {
		fmt.Fprintf(stderr, "embed: %v\n", err)
		return 1
	}
	return 0
}
