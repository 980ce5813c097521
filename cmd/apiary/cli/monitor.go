package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/apiary-net/apiary/cells/api/models"
)

// streamingAnnotation marks commands that run until interrupted: Execute
// gives them no request timeout.
const streamingAnnotation = "apiary.streaming"

// newMonitorCommand is `apiary monitor`: the datapath's drops and policy
// verdicts, live, one line per event (docs/datapath.md, "Reading apiary
// monitor").
func newMonitorCommand(global *options) *cobra.Command {
	var (
		types  []string
		output outputFormat
	)
	cmd := &cobra.Command{
		Use:         "monitor",
		Short:       "Print the datapath's drop and policy-verdict events as they happen",
		Args:        cobra.NoArgs,
		Annotations: map[string]string{streamingAnnotation: "true"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := output.check(); err != nil {
				return err
			}
			for _, t := range types {
				if t != models.MonitorTypeDrop && t != models.MonitorTypePolicyVerdict && t != models.MonitorTypeTrace {
					return fmt.Errorf("--type: %q is not %s, %s or %s", t, models.MonitorTypeDrop, models.MonitorTypePolicyVerdict, models.MonitorTypeTrace)
				}
			}
			c := global.client()
			defer c.Close()
			w := cmd.OutOrStdout()
			for msg, err := range c.Monitor(cmd.Context(), types...) {
				if err != nil {
					return err
				}
				if msg.Type == models.MonitorTypeSubscribed {
					fmt.Fprintf(cmd.ErrOrStderr(), "Listening for events (%s). Press Ctrl-C to quit\n", typeNames(types))
					continue
				}
				if err := printMonitorMessage(w, msg, output.isJSON()); err != nil {
					return err
				}
			}
			if cmd.Context().Err() != nil {
				return nil // interrupted
			}
			return errors.New("the agent closed the monitor stream (is it stopping?)")
		},
	}
	cmd.Flags().StringSliceVarP(&types, "type", "t", nil, "Only events of this type: drop, policy-verdict or trace (forwarded packets; repeat for several; default drop and policy-verdict)")
	output.register(cmd.Flags())
	return cmd
}

func typeNames(types []string) string {
	if len(types) == 0 {
		return models.MonitorTypeDrop + ", " + models.MonitorTypePolicyVerdict
	}
	return strings.Join(types, ", ")
}

// printMonitorMessage prints one message: a JSON line, or the text line
// of MonitorLine.
func printMonitorMessage(w io.Writer, msg models.MonitorMessage, asJSON bool) error {
	if asJSON {
		b, err := json.Marshal(msg)
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	}
	_, err := io.WriteString(w, MonitorLine(msg)+"\n")
	return err
}

// MonitorLine formats a monitor message as one line of text:
//
//	xx drop (Policy denied) ingress endpoint 7, identity 2001->1000: 10.0.1.1:40000 -> 10.0.0.7:80 TCP [SYN], labels [k8s:app=client] -> [k8s:app=web]
//	-> policy-verdict allow (match L3-L4) egress endpoint 7, identity 1000->2001: 10.0.0.7:40000 -> 10.0.1.1:80 TCP [SYN], labels [k8s:app=web] -> [k8s:app=db]
//	xx policy-verdict deny (match none, Policy denied) ingress endpoint 7, identity 2->1000: 192.0.2.1 -> 10.0.0.7 ICMP type 8, labels [reserved:world] -> [k8s:app=web]
//	-> trace forwarded (reply) egress endpoint 7, identity 1000->2001: 10.0.0.7:80 -> 10.0.1.1:40000 TCP [SYN|ACK], labels [k8s:app=web] -> [k8s:app=client]
//	!! lost 12 events: apiary monitor read too slowly
func MonitorLine(msg models.MonitorMessage) string {
	if msg.Type == models.MonitorTypeLost {
		return fmt.Sprintf("!! lost %d events: apiary monitor read too slowly", msg.Lost)
	}
	e := msg.MonitorEvent
	if e == nil {
		return msg.Type
	}
	var head string
	switch msg.Type {
	case models.MonitorTypeDrop:
		head = fmt.Sprintf("xx drop (%s)", e.Reason)
	case models.MonitorTypePolicyVerdict:
		mark, detail := "->", "match "+e.Match
		switch e.Verdict {
		case "allow":
		case "audit": // denied by policy, passed: --policy-audit-mode
			mark, detail = "~>", detail+", "+e.Reason
		default:
			mark, detail = "xx", detail+", "+e.Reason
		}
		head = fmt.Sprintf("%s policy-verdict %s (%s)", mark, e.Verdict, detail)
	case models.MonitorTypeTrace:
		head = fmt.Sprintf("-> trace %s (%s)", e.Verdict, e.State)
	default:
		head = "?? " + msg.Type
	}
	flow := fmt.Sprintf("%s -> %s %s", peerAddr(e.Source), peerAddr(e.Destination), e.Protocol)
	if e.ICMPType != nil {
		flow += " type " + strconv.Itoa(int(*e.ICMPType))
	}
	if e.TCPFlags != "" {
		flow += " [" + e.TCPFlags + "]"
	}
	return fmt.Sprintf("%s %s endpoint %d, identity %d->%d: %s, labels [%s] -> [%s]",
		head, e.Direction, e.EndpointID, e.Source.Identity, e.Destination.Identity, flow,
		strings.Join(e.Source.Labels, ","), strings.Join(e.Destination.Labels, ","))
}

// peerAddr is ip:port (ports 0 omitted; IPv6 in brackets), or "?" for a
// frame that is not IP.
func peerAddr(p models.MonitorPeer) string {
	addr, err := netip.ParseAddr(p.IP)
	switch {
	case err != nil:
		return "?"
	case p.Port == 0:
		return addr.String()
	}
	return netip.AddrPortFrom(addr, p.Port).String()
}
