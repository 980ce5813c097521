package node_test

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath/node"
)

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		give node.Config
		want string // "" for valid
	}{
		{name: "defaults", give: node.DefaultConfig},
		{name: "everything", give: node.Config{NodeName: "worker-1.example", NodeIP: "10.0.0.5", PodCIDR: []string{"10.0.1.0/24", "fd00:1::/64"}}},
		{name: "loopback for a lab", give: node.Config{NodeIP: "127.0.0.11"}},
		{name: "IPv6 node", give: node.Config{NodeIP: "fd00::5"}},
		{name: "upper-case name", give: node.Config{NodeName: "Worker-1"}, want: `--node-name: "Worker-1" must be lower-case`},
		{name: "slash in name", give: node.Config{NodeName: "a/b"}, want: `--node-name: "a/b"`},
		{name: "not an IP", give: node.Config{NodeIP: "10.0.0.300"}, want: `--node-ip: "10.0.0.300" is not an IP address`},
		{name: "unspecified IP", give: node.Config{NodeIP: "0.0.0.0"}, want: "--node-ip: 0.0.0.0 is not a unicast address"},
		{name: "multicast IP", give: node.Config{NodeIP: "ff02::1"}, want: "--node-ip: ff02::1 is not a unicast address"},
		{name: "link-local IP", give: node.Config{NodeIP: "169.254.1.1"}, want: "--node-ip: 169.254.1.1 is not a unicast address"},
		{name: "not a CIDR", give: node.Config{PodCIDR: []string{"10.0.1.0"}}, want: `--pod-cidr: "10.0.1.0" is not a CIDR`},
		{name: "host bits", give: node.Config{PodCIDR: []string{"10.0.1.7/24"}}, want: "--pod-cidr: 10.0.1.7/24 has host bits set (did you mean 10.0.1.0/24?)"},
		{name: "two IPv4", give: node.Config{PodCIDR: []string{"10.0.1.0/24", "10.0.2.0/24"}}, want: "--pod-cidr: more than one IPv4 CIDR (10.0.2.0/24)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.give.Validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Validate() = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestBadFlagsStopTheAgent checks the error a user sees: one line that
// names the flag, before anything starts.
func TestBadFlagsStopTheAgent(t *testing.T) {
	tests := []struct {
		flag, want string
	}{
		{"node-ip=300.1.1.1", `invalid configuration: --node-ip: "300.1.1.1" is not an IP address`},
		{"pod-cidr=10.0.1.1/24", "invalid configuration: --pod-cidr: 10.0.1.1/24 has host bits set"},
		{"cluster-name=Prod", `invalid configuration: --cluster-name: "Prod" must be`},
		{"cluster-id=256", "invalid configuration: --cluster-id: 256 is out of range 0..255"},
	}
	for _, tc := range tests {
		t.Run(tc.flag, func(t *testing.T) {
			_, err := celltest.Populate(t, []string{"node-name=node-a", tc.flag}, testCells(noAllocator{}), node.Cell)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("populate = %v, want one line starting with %q", err, tc.want)
			}
		})
	}
}

func TestHandlersValidatePeriodically(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		var m node.Manager
		celltest.StartWithFlags(t, localFlags, testCells(noAllocator{}), node.Cell,
			cell.Provide(func() node.NodeHandlerOut { return node.NodeHandlerOut{Handler: rec} }),
			celltest.Capture(&m))
		m.NodeUpdated(remote("node-b", "192.0.2.20"))
		synctest.Wait()
		rec.takeAll() // the add calls, and the first validation at start

		time.Sleep(node.ValidateInterval - time.Second)
		synctest.Wait()
		if calls := rec.takeAll(); len(calls) != 0 {
			t.Errorf("calls before the interval: %v", calls)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if got := strings.Join(rec.takeAll(), "|"); got != "validate default/node-a|validate default/node-b" {
			t.Errorf("after %s: %s, want every node validated", node.ValidateInterval, got)
		}
		time.Sleep(node.ValidateInterval)
		synctest.Wait()
		if got := len(rec.takeAll()); got != 2 {
			t.Errorf("%d validations in the second interval, want 2", got)
		}
	})
}
