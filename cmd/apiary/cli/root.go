package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/version"
)

// SocketEnv is the environment variable that sets the default of --socket.
const SocketEnv = "APIARY_SOCK"

// requestTimeout bounds one command's requests to the agent (streaming
// commands, marked with streamingAnnotation, have none).
const requestTimeout = 30 * time.Second

// exitError ends the command with a code and without a message (the
// command has already said what went wrong).
type exitError int

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// options are the global flags.
type options struct {
	socket string
}

// client returns a client for --socket.
func (o *options) client() *client.Client { return client.New(o.socket) }

// New returns the apiary root command.
func New() *cobra.Command {
	opts := &options{}
	root := &cobra.Command{
		Use:           "apiary",
		Short:         "Inspect and control the apiary agent on this node",
		Version:       version.Get().String(),
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetVersionTemplate("{{.Name}} {{.Version}}\n")
	root.PersistentFlags().StringVar(&opts.socket, "socket", defaultSocket(),
		"Unix socket of the agent's REST API (default from $"+SocketEnv+")")
	root.AddCommand(newStatusCommand(opts), newHiveCommand(opts), newVersionCommand(opts), newKVStoreCommand(opts), newIdentityCommand(opts), newNodeCommand(opts), newIPCacheCommand(opts), newPolicyCommand(opts), newEndpointCommand(opts), newClusterMeshCommand(opts), newServiceCommand(opts), newMonitorCommand(opts), newBPFCommand(opts),
		newObserveCommand(), newHubbleCommand())
	requireKnownSubcommands(root)
	return root
}

func defaultSocket() string {
	if s, ok := os.LookupEnv(SocketEnv); ok && s != "" {
		return s
	}
	return client.DefaultSocketPath
}

// Execute runs apiary with args and returns the exit code. Errors are
// written to stderr as one line.
func Execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := New()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if !isStreaming(root, args) {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, requestTimeout)
		defer cancel()
	}
	err := root.ExecuteContext(ctx)
	var code exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &code):
		return int(code)
	default:
		fmt.Fprintln(stderr, oneLine(err))
		return 1
	}
}

// oneLine joins the non-blank lines of an error message with "; ".
func oneLine(err error) string {
	var lines []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "; ")
}

// isStreaming reports whether args run a command that streams until
// interrupted (apiary monitor), which gets no request timeout.
func isStreaming(root *cobra.Command, args []string) bool {
	cmd, _, err := root.Find(args)
	return err == nil && cmd.Annotations[streamingAnnotation] != ""
}
