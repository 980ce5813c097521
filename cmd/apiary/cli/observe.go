package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/apiary-net/apiary/datapath/hubble/api/observer"
)

// HubbleServerEnv sets the default of --server.
const HubbleServerEnv = "APIARY_HUBBLE_SERVER"

// defaultHubbleServer is the agent's --hubble-socket-path default.
const defaultHubbleServer = "unix:///var/run/apiary/hubble.sock"

// observeOptions are the flags of apiary observe, in hubble's spelling.
type observeOptions struct {
	server       string
	output       string
	last, first  uint64
	follow       bool
	since, until string
	filters      flowFilterFlags
}

// newObserveCommand is `apiary observe` (and `apiary hubble observe`):
// the flows of the agent's Hubble API, as `hubble observe` prints them.
func newObserveCommand() *cobra.Command { return observeCommand(&observeOptions{}) }

// observeCommand builds the command around o, which its flags fill.
func observeCommand(o *observeOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:         "observe",
		Short:       "Print the flows of the agent's Hubble API, as hubble observe does",
		Args:        cobra.NoArgs,
		Annotations: map[string]string{streamingAnnotation: "true"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			req, err := o.request(time.Now())
			if err != nil {
				return err
			}
			return observe(cmd, o, req)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.server, "server", defaultHubbleServer, "Address of the Hubble API: unix://<path> or host:port (default from $"+HubbleServerEnv+")")
	fs.StringVarP(&o.output, "output", "o", "compact", "Output format: compact or json (hubble's JSON, one GetFlowsResponse a line)")
	fs.Uint64Var(&o.last, "last", 0, "The last N flows (default 20 unless --follow, --since or --first)")
	fs.Uint64Var(&o.first, "first", 0, "The first N flows of the buffer")
	fs.BoolVarP(&o.follow, "follow", "f", false, "Keep printing new flows")
	fs.StringVar(&o.since, "since", "", "Flows since this time: RFC 3339 or a duration ago (5m)")
	fs.StringVar(&o.until, "until", "", "Flows until this time: RFC 3339 or a duration ago (1m)")
	o.filters.register(cmd)
	if s, ok := os.LookupEnv(HubbleServerEnv); ok && s != "" {
		o.server = s
	}
	return cmd
}

// newHubbleCommand is `apiary hubble`: observe and status.
func newHubbleCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "hubble", Short: "Read the agent's Hubble API (flows)"}
	cmd.AddCommand(newObserveCommand(), newHubbleStatusCommand())
	return cmd
}

// request builds the GetFlowsRequest.
func (o *observeOptions) request(now time.Time) (*observer.GetFlowsRequest, error) {
	if o.output != "compact" && o.output != "json" && o.output != "jsonpb" {
		return nil, fmt.Errorf("--output: %q is not compact or json", o.output)
	}
	if o.first > 0 && (o.last > 0 || o.follow) {
		return nil, errors.New("--first cannot be combined with --last or --follow")
	}
	req := &observer.GetFlowsRequest{Number: o.last, Follow: o.follow}
	if o.first > 0 {
		req.Number, req.First = o.first, true
	}
	var err error
	if req.Since, err = parseTime("--since", o.since, now); err != nil {
		return nil, err
	}
	if req.Until, err = parseTime("--until", o.until, now); err != nil {
		return nil, err
	}
	if req.Number == 0 && !req.Follow && req.Since == nil {
		req.Number = 20
	}
	if req.Whitelist, err = o.filters.build(); err != nil {
		return nil, err
	}
	return req, nil
}

func parseTime(flag, s string, now time.Time) (*timestamppb.Timestamp, error) {
	if s == "" {
		return nil, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return timestamppb.New(t), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return nil, fmt.Errorf("%s: %q is neither an RFC 3339 time nor a positive duration", flag, s)
	}
	return timestamppb.New(now.Add(-d)), nil
}

// dialHubble connects to --server.
func dialHubble(server string) (*grpc.ClientConn, error) {
	target := server
	if !strings.HasPrefix(target, "unix://") && !strings.Contains(target, "://") {
		target = "passthrough:///" + target
	}
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("--server %s: %w", server, err)
	}
	return conn, nil
}

func observe(cmd *cobra.Command, o *observeOptions, req *observer.GetFlowsRequest) error {
	conn, err := dialHubble(o.server)
	if err != nil {
		return err
	}
	defer conn.Close()
	stream, err := observer.NewObserverClient(conn).GetFlows(cmd.Context(), req)
	if err != nil {
		return fmt.Errorf("get flows from %s: %w", o.server, err)
	}
	w := cmd.OutOrStdout()
	for {
		resp, err := stream.Recv()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil && cmd.Context().Err() != nil:
			return nil // interrupted
		case err != nil:
			return fmt.Errorf("get flows from %s: %w", o.server, err)
		}
		if err := printFlowResponse(w, cmd.ErrOrStderr(), resp, o.output != "compact"); err != nil {
			return err
		}
	}
}

// hubbleJSON marshals a message as hubble's generated MarshalJSON does
// (protojson with the .proto field names), so that encoding/json
// compacts it as hubble's printer does.
type hubbleJSON struct{ resp *observer.GetFlowsResponse }

func (h hubbleJSON) MarshalJSON() ([]byte, error) {
	return protojson.MarshalOptions{UseProtoNames: true}.Marshal(h.resp)
}

// printFlowResponse prints one response: a JSON line as `hubble observe
// -o json`, or a compact line; lost events go to stderr, as hubble's.
func printFlowResponse(w, werr io.Writer, resp *observer.GetFlowsResponse, asJSON bool) error {
	if asJSON {
		switch {
		case resp.GetFlow() != nil:
			return json.NewEncoder(w).Encode(hubbleJSON{resp})
		case resp.GetLostEvents() != nil: // hubble writes them to stderr
			return json.NewEncoder(werr).Encode(hubbleJSON{resp})
		}
		return nil
	}
	if l := resp.GetLostEvents(); l != nil {
		_, err := fmt.Fprintf(werr, "EVENTS LOST: %s CPU(%d) %d\n", l.GetSource(), l.GetCpu().GetValue(), l.GetNumEventsLost())
		return err
	}
	if f := resp.GetFlow(); f != nil {
		_, err := io.WriteString(w, CompactFlow(f)+"\n")
		return err
	}
	return nil
}
