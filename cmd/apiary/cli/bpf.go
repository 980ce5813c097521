package cli

import (
	"context"
	"fmt"
	"iter"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
)

// newBPFCommand is `apiary bpf ipcache list | policy get <id> | ct list
// | metrics | lb list`: what the kernel's maps hold, with Cilium's columns.
func newBPFCommand(global *options) *cobra.Command {
	return newResourceCommand("bpf", "Show the content of the datapath's BPF maps", func(output *outputFormat) []*cobra.Command {
		ipcache := &cobra.Command{Use: "ipcache", Short: "The BPF ipcache map (prefix -> identity)"}
		ipcache.AddCommand(listCommand(global, output, listSpec[models.BPFIPCacheList, models.BPFIPCacheEntry]{
			use: "list", short: "List the entries of the BPF ipcache map", args: cobra.NoArgs,
			pages: func(ctx context.Context, c *client.Client, _ []string) iter.Seq2[*models.BPFIPCacheList, error] {
				return c.BPFIPCachePages(ctx, client.ListOptions{})
			},
			items: func(p *models.BPFIPCacheList) []models.BPFIPCacheEntry { return p.Items },
			text: table[*models.BPFIPCacheList]{
				header: []string{"PREFIX", "IDENTITY", "TUNNEL/HOST", "ENCRYPT KEY"},
				rows:   func(p *models.BPFIPCacheList) [][]string { return bpfIPCacheRows(p.Items) },
			},
		}))
		policy := &cobra.Command{Use: "policy", Short: "The BPF policy maps of the endpoints"}
		policy.AddCommand(getCommand(global, output, getSpec[*models.BPFPolicy]{
			use: "get <endpoint-id>", short: "Show an endpoint's BPF policy map with the labels of each identity",
			args: cobra.ExactArgs(1),
			fetch: func(ctx context.Context, c *client.Client, args []string) (*models.BPFPolicy, error) {
				return c.BPFPolicy(ctx, args[0])
			},
			text: table[*models.BPFPolicy]{
				header: []string{"POLICY", "DIRECTION", "LABELS (IDENTITY)", "PORT/PROTO", "BYTES", "PACKETS"},
				trim:   true,
				rows:   func(p *models.BPFPolicy) [][]string { return bpfPolicyRows(p.Entries) },
			},
		}))
		ct := &cobra.Command{Use: "ct", Short: "The BPF connection tracking maps"}
		ct.AddCommand(listCommand(global, output, listSpec[models.BPFCTList, models.BPFCTEntry]{
			use: "list", short: "List the tracked flows (IPv4, then IPv6)", args: cobra.NoArgs,
			pages: func(ctx context.Context, c *client.Client, _ []string) iter.Seq2[*models.BPFCTList, error] {
				return c.BPFCTPages(ctx, client.ListOptions{})
			},
			items: func(p *models.BPFCTList) []models.BPFCTEntry { return p.Items },
			text: table[*models.BPFCTList]{
				header: []string{"PROTO", "SOURCE", "DESTINATION", "DIRECTION", "ENDPOINT", "PEER IDENTITY", "EXPIRES",
					"TX PACKETS", "TX BYTES", "RX PACKETS", "RX BYTES", "POLICY REV", "TCP FLAGS", "FLAGS"},
				trim: true,
				rows: func(p *models.BPFCTList) [][]string { return bpfCTRows(p.Items) },
			},
		}))
		metrics := getCommand(global, output, getSpec[*models.BPFMetrics]{
			use: "metrics", short: "Show the datapath's packet counters by reason and direction", args: cobra.NoArgs,
			fetch: func(ctx context.Context, c *client.Client, _ []string) (*models.BPFMetrics, error) {
				return c.BPFMetrics(ctx)
			},
			text: table[*models.BPFMetrics]{
				header: []string{"REASON", "DIRECTION", "PACKETS", "BYTES"},
				rows:   func(m *models.BPFMetrics) [][]string { return bpfMetricRows(m.Items) },
			},
		})
		lb := &cobra.Command{Use: "lb", Short: "The BPF load-balancing maps (services)"}
		lb.AddCommand(listCommand(global, output, listSpec[models.BPFLBList, models.BPFLBService]{
			use: "list", short: "List the service frontends with their backend slots", args: cobra.NoArgs,
			pages: func(ctx context.Context, c *client.Client, _ []string) iter.Seq2[*models.BPFLBList, error] {
				return c.BPFLBPages(ctx, client.ListOptions{})
			},
			items: func(p *models.BPFLBList) []models.BPFLBService { return p.Items },
			text: table[*models.BPFLBList]{
				header: []string{"SERVICE ADDRESS", "BACKEND ADDRESS (REVNAT_ID) (SLOT)"},
				rows:   func(p *models.BPFLBList) [][]string { return bpfLBRows(p.Items) },
			},
		}))
		return []*cobra.Command{ipcache, policy, ct, metrics, lb}
	})
}

func bpfIPCacheRows(items []models.BPFIPCacheEntry) [][]string {
	rows := make([][]string, 0, len(items))
	for _, e := range items {
		tunnel := e.TunnelPeer
		if tunnel == "" {
			tunnel = "-"
		}
		rows = append(rows, []string{e.Prefix, strconv.FormatUint(uint64(e.Identity), 10), tunnel, strconv.Itoa(int(e.EncryptKey))})
	}
	return rows
}

// bpfPolicyRows are Cilium's `bpf policy get` rows: the first label of
// the identity with the number, the other labels on lines of their own.
func bpfPolicyRows(entries []models.BPFPolicyEntry) [][]string {
	var rows [][]string
	for _, e := range entries {
		labels := e.Labels
		switch {
		case e.Identity == 0:
			labels = []string{"ANY"}
		case len(labels) == 0:
			labels = []string{"(unknown identity)"}
		}
		first := fmt.Sprintf("%s (%d)", labels[0], e.Identity)
		if e.Identity == 0 {
			first = "ANY"
		}
		rows = append(rows, []string{e.Policy, e.Direction, first, e.PortRange,
			strconv.FormatUint(e.Bytes, 10), strconv.FormatUint(e.Packets, 10)})
		for _, l := range labels[1:] {
			rows = append(rows, []string{"", "", l, "", "", ""})
		}
	}
	return rows
}

func bpfCTRows(items []models.BPFCTEntry) [][]string {
	rows := make([][]string, 0, len(items))
	for _, e := range items {
		expires := (time.Duration(e.ExpiresInSeconds) * time.Second).String()
		if e.ExpiresInSeconds < 0 {
			expires = "expired"
		}
		flags := ""
		for i, f := range e.Flags {
			if i > 0 {
				flags += ","
			}
			flags += f
		}
		rows = append(rows, []string{e.Protocol, e.Source, e.Destination, e.Direction, strconv.Itoa(int(e.EndpointID)),
			strconv.FormatUint(uint64(e.PeerIdentity), 10), expires,
			strconv.FormatUint(e.TxPackets, 10), strconv.FormatUint(e.TxBytes, 10),
			strconv.FormatUint(e.RxPackets, 10), strconv.FormatUint(e.RxBytes, 10),
			strconv.FormatUint(uint64(e.PolicyRevision), 10), e.TCPFlags, flags})
	}
	return rows
}

func bpfMetricRows(items []models.BPFMetric) [][]string {
	rows := make([][]string, 0, len(items))
	for _, m := range items {
		rows = append(rows, []string{m.Reason, m.Direction, strconv.FormatUint(m.Packets, 10), strconv.FormatUint(m.Bytes, 10)})
	}
	return rows
}

// bpfLBRows are Cilium's `bpf lb list` rows: per frontend, the master
// entry (0.0.0.0:0 or [::]:0, rev-NAT index, slot 0, flags), then each
// backend slot.
func bpfLBRows(items []models.BPFLBService) [][]string {
	var rows [][]string
	for _, s := range items {
		first := s.Frontend
		if !s.NoMaster {
			zero := "0.0.0.0:0"
			if strings.HasPrefix(s.Frontend, "[") {
				zero = "[::]:0"
			}
			rows = append(rows, []string{first, fmt.Sprintf("%s (%d) (0) [%s]", zero, s.RevNATIndex, strings.Join(s.Flags, ", "))})
			first = ""
		}
		if len(s.SourceRanges) > 0 {
			rows = append(rows, []string{first, "source ranges: " + strings.Join(s.SourceRanges, ", ")})
			first = ""
		}
		for _, b := range s.Backends {
			entry := fmt.Sprintf("%s (%d) (%d)", b.Address, s.RevNATIndex, b.Slot)
			if b.Address == "" {
				entry = fmt.Sprintf("backend %d not found", b.BackendID)
			}
			rows = append(rows, []string{first, entry})
			first = ""
		}
	}
	return rows
}
