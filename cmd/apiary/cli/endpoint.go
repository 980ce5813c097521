package cli

import (
	"context"
	"fmt"
	"io"
	"iter"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
)

// newEndpointCommand is `apiary endpoint list|get`: the node's
// endpoints, like `cilium endpoint list|get`.
func newEndpointCommand(global *options) *cobra.Command {
	return newResourceCommand("endpoint", "Show the endpoints of this node", func(output *outputFormat) []*cobra.Command {
		list := listCommand(global, output, listSpec[models.EndpointList, models.Endpoint]{
			use: "list", short: "List every endpoint with its policy enforcement, identity, labels, addresses and state",
			args: cobra.NoArgs,
			pages: func(ctx context.Context, c *client.Client, _ []string) iter.Seq2[*models.EndpointList, error] {
				return c.EndpointPages(ctx, client.ListOptions{})
			},
			items: func(p *models.EndpointList) []models.Endpoint { return p.Items },
			text: table[*models.EndpointList]{
				header: []string{"ENDPOINT", "POLICY (ingress) ENFORCEMENT", "POLICY (egress) ENFORCEMENT", "IDENTITY",
					"LABELS (source:key[=value])", "IPv4", "IPv6", "STATUS"},
				trim: true,
				rows: func(p *models.EndpointList) [][]string { return endpointRows(p.Items) },
			},
		})
		get := &cobra.Command{
			Use: "get <id>", Short: "Show one endpoint as JSON", Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				id, err := strconv.ParseUint(args[0], 10, 16)
				if err != nil || id == 0 {
					return fmt.Errorf("endpoint id %q: not a number from 1 to 65535", args[0])
				}
				// Always JSON, as `cilium endpoint get`; -o json is accepted.
				json := outputFormat("json")
				return query(cmd, global, json,
					func(ctx context.Context, c *client.Client) (*models.Endpoint, error) {
						return c.Endpoint(ctx, uint16(id))
					},
					func(io.Writer, *models.Endpoint) {})
			},
		}
		return []*cobra.Command{list, get}
	})
}

// endpointRows are Cilium's endpoint table: one label per line.
func endpointRows(eps []models.Endpoint) [][]string {
	var rows [][]string
	for _, e := range eps {
		first := ""
		if len(e.Labels) > 0 {
			first = e.Labels[0]
		}
		identity := ""
		if e.Identity != 0 {
			identity = strconv.FormatUint(uint64(e.Identity), 10)
		}
		rows = append(rows, []string{strconv.Itoa(int(e.ID)), enforcement(e.Policy.IngressEnforcement),
			enforcement(e.Policy.EgressEnforcement), identity, first, e.IPv4, e.IPv6, e.State})
		for _, l := range e.Labels[min(1, len(e.Labels)):] {
			rows = append(rows, []string{"", "", "", "", l, "", "", ""})
		}
	}
	return rows
}

func enforcement(on bool) string {
	if on {
		return "Enabled"
	}
	return "Disabled"
}
