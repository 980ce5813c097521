package localnode

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
)

// fakeSource answers with node after tries failed calls.
type fakeSource struct {
	tries int
	node  KubernetesNode
	calls int
}

func (f *fakeSource) Node(_ context.Context, name string) (KubernetesNode, error) {
	f.calls++
	if f.calls <= f.tries {
		return KubernetesNode{}, errors.New(`nodes "` + name + `" not found`)
	}
	return f.node, nil
}

func shortWaits(t *testing.T) {
	wait, try, interval := nodeWaitTimeout, nodeTryTimeout, nodeWaitInterval
	nodeWaitTimeout, nodeTryTimeout, nodeWaitInterval = 300*time.Millisecond, 100*time.Millisecond, 10*time.Millisecond
	t.Cleanup(func() { nodeWaitTimeout, nodeTryTimeout, nodeWaitInterval = wait, try, interval })
}

func TestStoreFromKubernetes(t *testing.T) {
	shortWaits(t)
	dual := KubernetesNode{
		Addresses: []netip.Addr{netip.MustParseAddr("10.0.0.5"), netip.MustParseAddr("10.0.0.6"), netip.MustParseAddr("fd00::5")},
		PodCIDRs:  []string{"10.244.3.0/24", "fd00:10:244:3::/64"},
	}
	tests := []struct {
		name    string
		cfg     Config
		src     *fakeSource
		want    LocalNode
		wantErr string
	}{{
		name: "node IP and CIDRs from the Node, after it appears",
		cfg:  Config{NodeName: "a", IPAM: IPAMKubernetes},
		src:  &fakeSource{tries: 3, node: dual},
		want: LocalNode{Name: "a", IP: netip.MustParseAddr("10.0.0.5"), SecondaryIP: netip.MustParseAddr("fd00::5"),
			IPv4AllocCIDR: netip.MustParsePrefix("10.244.3.0/24"), IPv6AllocCIDR: netip.MustParsePrefix("fd00:10:244:3::/64")},
	}, {
		name: "--node-ip wins; CIDRs not there yet",
		cfg:  Config{NodeName: "a", NodeIP: "192.0.2.1", IPAM: IPAMKubernetes},
		src:  &fakeSource{node: KubernetesNode{Addresses: dual.Addresses}},
		want: LocalNode{Name: "a", IP: netip.MustParseAddr("192.0.2.1")},
	}, {
		name: "--node-ip given and the API server does not answer: start without CIDRs",
		cfg:  Config{NodeName: "a", NodeIP: "192.0.2.1", IPAM: IPAMKubernetes},
		src:  &fakeSource{tries: 1 << 30},
		want: LocalNode{Name: "a", IP: netip.MustParseAddr("192.0.2.1")},
	}, {
		name:    "no --node-ip and no Node",
		cfg:     Config{NodeName: "a", IPAM: IPAMKubernetes},
		src:     &fakeSource{tries: 1 << 30},
		wantErr: `--node-ip: not set, and the addresses of Node a could not be read from the API server within 300ms: nodes "a" not found`,
	}, {
		name:    "no --node-ip and a Node without addresses",
		cfg:     Config{NodeName: "a", IPAM: IPAMKubernetes},
		src:     &fakeSource{node: KubernetesNode{PodCIDRs: dual.PodCIDRs}},
		wantErr: "node a has no InternalIP or ExternalIP in status.addresses",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := newStoreFromConfig(storeParams{Config: tc.cfg, Log: celltest.Logger(t), Source: tc.src})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.want.Cluster = cluster.Info{}
			if got := st.Get(); got != tc.want {
				t.Fatalf("node = %+v, want %+v", got, tc.want)
			}
		})
	}
}
