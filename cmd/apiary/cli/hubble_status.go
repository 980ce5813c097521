package cli

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/apiary-net/apiary/datapath/hubble/api/observer"
)

// newHubbleStatusCommand is `apiary hubble status`: the observer's flow
// counts, as `hubble status` prints them.
func newHubbleStatusCommand() *cobra.Command {
	server := defaultHubbleServer
	if s, ok := os.LookupEnv(HubbleServerEnv); ok && s != "" {
		server = s
	}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Print the Hubble observer's flow counts",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			conn, err := dialHubble(server)
			if err != nil {
				return err
			}
			defer conn.Close()
			st, err := observer.NewObserverClient(conn).ServerStatus(cmd.Context(), &observer.ServerStatusRequest{})
			if err != nil {
				return fmt.Errorf("hubble status from %s: %w", server, err)
			}
			pct := 0.0
			if st.GetMaxFlows() > 0 {
				pct = 100 * float64(st.GetNumFlows()) / float64(st.GetMaxFlows())
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "Current/Max Flows: %d/%d (%.2f%%)\n", st.GetNumFlows(), st.GetMaxFlows(), pct)
			fmt.Fprintf(w, "Flows/s: %.2f\n", st.GetFlowsRate())
			fmt.Fprintf(w, "Seen flows: %d\n", st.GetSeenFlows())
			fmt.Fprintf(w, "Uptime: %s\n", time.Duration(st.GetUptimeNs()).Round(time.Second))
			return nil
		},
	}
	cmd.Flags().StringVar(&server, "server", server, "Address of the Hubble API: unix://<path> or host:port (default from $"+HubbleServerEnv+")")
	return cmd
}
