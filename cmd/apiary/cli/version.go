package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/version"
)

func newVersionCommand(global *options) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Show the versions of this client and of the agent",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "Client: %s\n", version.Get())
			c := global.client()
			defer c.Close()
			v, err := c.Version(cmd.Context())
			if errors.Is(err, client.ErrNotReachable) {
				fmt.Fprintln(cmd.ErrOrStderr(), err)
				return nil
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "Agent:  %s\n", v)
			return nil
		},
	}
}
