package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/safefile"
)

// newPolicyCommand is `apiary policy get|import|delete|trace|simulate`,
// like `cilium policy ...`.
func newPolicyCommand(global *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Manage the agent's network policies",
	}
	cmd.AddCommand(newPolicyGetCommand(global), newPolicyImportCommand(global),
		newPolicyDeleteCommand(global), newPolicyTraceCommand(global), newPolicySimulateCommand())
	return cmd
}

// splitLabels splits "a,b" and separate arguments into one list.
func splitLabels(args []string) []string {
	var out []string
	for _, a := range args {
		for _, l := range strings.Split(a, ",") {
			if l = strings.TrimSpace(l); l != "" {
				out = append(out, l)
			}
		}
	}
	return out
}

func newPolicyGetCommand(global *options) *cobra.Command {
	var output outputFormat
	cmd := &cobra.Command{
		Use:   "get [labels]",
		Short: "Show the rules in force (those carrying every label given) and the revision",
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := output.check(); err != nil {
				return err
			}
			c := global.client()
			defer c.Close()
			got, err := c.PolicyGet(cmd.Context(), splitLabels(args))
			if err != nil {
				return err
			}
			if output.isJSON() {
				return printJSON(cmd.OutOrStdout(), got)
			}
			if err := printJSON(cmd.OutOrStdout(), got.Rules); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Revision: %d\n", got.Revision)
			return nil
		},
	}
	output.register(cmd.Flags())
	return cmd
}

func newPolicyImportCommand(global *options) *cobra.Command {
	var wait bool
	var waitTime time.Duration
	cmd := &cobra.Command{
		Use:   "import <file|->",
		Short: "Import policy documents (YAML or JSON), all or nothing",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := readInput(cmd.InOrStdin(), args[0])
			if err != nil {
				return err
			}
			c := global.client()
			defer c.Close()
			answer, err := c.PolicyImport(cmd.Context(), data)
			if err != nil {
				return err
			}
			for _, w := range answer.Warnings {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", w)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Revision: %d\n", answer.Revision)
			if !wait {
				return nil
			}
			return waitRealized(cmd.Context(), c, answer.Revision, waitTime)
		},
	}
	cmd.Flags().BoolVar(&wait, "wait", false, "Wait until every endpoint enforces the new revision; exit 1 naming the endpoints that cannot")
	cmd.Flags().DurationVar(&waitTime, "wait-time", 20*time.Second, "How long --wait waits")
	return cmd
}

// readInput reads a file, or stdin for "-".
func readInput(stdin io.Reader, name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(stdin)
	}
	// A named pipe or a device would block the read (or never end):
	// only a regular file, of a bounded size, read within a deadline.
	data, err := safefile.Read(context.Background(), name, safefile.Limits{})
	if err != nil {
		return nil, fmt.Errorf("read policy file: %w", err)
	}
	return data, nil
}

func newPolicyDeleteCommand(global *options) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "delete <labels>|--all",
		Short: "Delete the rules carrying every label given, or --all rules imported through the API",
		RunE: func(cmd *cobra.Command, args []string) error {
			lbls := splitLabels(args)
			if all == (len(lbls) > 0) {
				return errors.New("give labels or --all, not both")
			}
			c := global.client()
			defer c.Close()
			out, err := c.PolicyDelete(cmd.Context(), lbls)
			if err != nil {
				return err
			}
			if out.Deleted != nil {
				fmt.Fprintf(cmd.OutOrStdout(), "Deleted %d rules\n", *out.Deleted)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Revision: %d\n", out.Revision)
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "Delete every rule imported through the API (--policy-dir files keep theirs)")
	return cmd
}

func newPolicyTraceCommand(global *options) *cobra.Command {
	var (
		output   outputFormat
		src, dst []string
		dport    string
	)
	cmd := &cobra.Command{
		Use:   "trace -s <labels|ns/pod|ip> -d <labels|ns/pod|ip> --dport <port/proto>",
		Short: "Explain whether the policy allows traffic from one pod or label set to another",
		Long: `Trace resolves the policy of a source and a destination identity and prints
the rules considered in each direction (egress of the source, ingress of
the destination), which of their entries match, and the final verdict.

Each side is one of:
  labels          k8s:app=web, app=web (source k8s), ns:<name> for the pod
                  namespace label; the local cluster label is added
  ns/pod          a pod of the local cluster, cluster/ns/pod for any cluster,
                  found in the ipcache (its identity and named ports)
  ip              the ipcache entry holding the address`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			req := models.PolicyTraceRequest{Source: splitLabels(src), Destination: splitLabels(dst), DPort: dport}
			return query(cmd, global, output,
				func(ctx context.Context, c *client.Client) (*models.PolicyTrace, error) {
					return c.PolicyTrace(ctx, req)
				},
				printTrace)
		},
	}
	cmd.Flags().StringSliceVarP(&src, "src", "s", nil, "Source: labels (comma-separated), ns/pod, cluster/ns/pod or an IP address")
	cmd.Flags().StringSliceVarP(&dst, "dst", "d", nil, "Destination: labels (comma-separated), ns/pod, cluster/ns/pod or an IP address")
	cmd.Flags().StringVar(&dport, "dport", "", "Destination port and protocol: 6379/TCP; for ICMP and ICMPv6 the message type: 8/ICMP, EchoRequest/ICMPv6")
	_ = cmd.MarkFlagRequired("src")
	_ = cmd.MarkFlagRequired("dst")
	_ = cmd.MarkFlagRequired("dport")
	output.register(cmd.Flags())
	return cmd
}

// printTrace prints a trace like `cilium policy trace`.
func printTrace(w io.Writer, tr *models.PolicyTrace) {
	for _, side := range []struct {
		title, pod string
		id         uint32
	}{
		{"Source:     ", tr.SourcePod, tr.SourceIdentity},
		{"Destination:", tr.DestinationPod, tr.DestinationIdentity},
	} {
		switch {
		case side.pod != "":
			fmt.Fprintf(w, "%s %s, identity %d\n", side.title, side.pod, side.id)
		case side.id != 0:
			fmt.Fprintf(w, "%s identity %d\n", side.title, side.id)
		default:
			fmt.Fprintf(w, "%s no identity has these labels\n", side.title)
		}
	}
	fmt.Fprintf(w, "Tracing From: [%s] => To: [%s] Ports: [%s]\n\n",
		strings.Join(tr.Source, ", "), strings.Join(tr.Destination, ", "), tr.DPort)
	printTraceDirection(w, "Egress of the source", tr.Egress, tr.PolicyMapMax)
	printTraceDirection(w, "Ingress of the destination", tr.Ingress, tr.PolicyMapMax)
	verdict := "DENIED"
	if tr.Allowed {
		verdict = "ALLOWED"
	}
	fmt.Fprintf(w, "Revision: %d\nFinal verdict: %s\n", tr.Revision, verdict)
}

func printTraceDirection(w io.Writer, title string, d models.PolicyTraceDirection, mapMax int) {
	from := "verdict from the rules"
	switch {
	case d.VerdictFrom == models.VerdictFromMapState && mapMax > 0:
		from = fmt.Sprintf("map state %d keys of %d", d.MapStateKeys, mapMax)
	case d.VerdictFrom == models.VerdictFromMapState: // an agent without a datapath
		from = fmt.Sprintf("map state %d keys", d.MapStateKeys)
	case d.VerdictFrom == models.VerdictFromNeighbourDiscovery:
		from = "neighbour discovery, never policed"
	}
	fmt.Fprintf(w, "%s: %d rules considered, default deny %v, %s\n", title, len(d.Rules), d.DefaultDeny, from)
	if d.VerdictFrom == models.VerdictFromMapState && mapMax > 0 && d.MapStateKeys > mapMax {
		fmt.Fprintf(w, "  !! the map state does not fit the policy map (--bpf-policy-map-max %d)\n", mapMax)
	}
	for _, r := range d.Rules {
		match := "no match"
		switch {
		case len(r.Denies) > 0:
			match = "denies: " + strings.Join(r.Denies, ", ")
		case len(r.Allows) > 0:
			match = "allows: " + strings.Join(r.Allows, ", ")
		}
		fmt.Fprintf(w, "  %s: %s\n", r.Policy, match)
	}
	verdict := "denied"
	if d.Allowed {
		verdict = "allowed"
	}
	fmt.Fprintf(w, "  => %s\n\n", verdict)
}
