package agent_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath/linux/netnstest"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
)

// dFullPolicy gives app=d a policy of 70 ports, more than
// --bpf-policy-map-max=64 holds: imported after d exists, it leaves d
// not-ready with its last good map, as an endpoint whose map overflows.
func dFullPolicy() string {
	var rules []string // a port rule holds at most 40 ports
	for first := 10000; first < 10070; first += 35 {
		var ports []string
		for p := first; p < first+35; p++ {
			ports = append(ports, fmt.Sprintf(`{port: "%d", protocol: TCP}`, p))
		}
		rules = append(rules, `{ports: [`+strings.Join(ports, ", ")+`]}`)
	}
	return `apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: d-full, namespace: default}
spec:
  endpointSelector: {matchLabels: {app: d}}
  ingress:
  - fromEndpoints: [{matchLabels: {app: a}}]
    toPorts: [` + strings.Join(rules, ", ") + `]
`
}

// TestRestartUnderTraffic restarts the agent 20 times while pod c, whom
// the policy denies, connects to b:8080 every few milliseconds: no
// connection may ever pass, with identities in etcd and without a
// kvstore (where identity numbers come from the state dir's journal).
// An endpoint whose policy overflows its map is present throughout. The
// allowed pod a still reaches b afterwards.
func TestRestartUnderTraffic(t *testing.T) {
	for _, mode := range []string{"no kvstore", "etcd"} {
		t.Run(mode, func(t *testing.T) {
			var srv *kvstoretest.Server
			if mode == "etcd" {
				srv = kvstoretest.StartServer(t)
			}
			n := newNodeA(t)
			if err := os.WriteFile(filepath.Join(n.policyDir, "policy.yaml"), []byte(enforcePolicy), 0o600); err != nil {
				t.Fatal(err)
			}
			pods := map[string]string{}
			for _, app := range []string{"a", "b", "c", "d"} {
				pods[app] = netnstest.New(t, "apiary-pod")
			}
			flags := []string{"bpf-policy-map-max=64", "conntrack-gc-interval=1h"}
			c, stop := startNode(t, n, srv, flags...)
			epB := createEndpoint(t, c, 2, pods["b"], "b")
			createEndpoint(t, c, 1, pods["a"], "a")
			createEndpoint(t, c, 3, pods["c"], "c")
			createEndpoint(t, c, 4, pods["d"], "d")
			if _, err := c.PolicyPut(t.Context(), []byte(dFullPolicy())); err != nil {
				t.Fatalf("import d's policy: %v", err)
			}
			celltest.Eventually(t, "endpoint 4 not-ready (its map overflows)", func() bool {
				ep, err := c.Endpoint(t.Context(), 4)
				return err == nil && ep.State == "not-ready"
			})
			ipB := addrOf(t, epB)
			serve(t, pods["b"], ipB, 8080)
			wantTCP(t, pods["a"], ipB, 8080, true)
			wantTCP(t, pods["c"], ipB, 8080, false)

			var attempts, passed atomic.Int64
			done := make(chan struct{})
			var wg sync.WaitGroup
			for range 4 { // four dialers: an attempt starts every few ms
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						select {
						case <-done:
							return
						default:
						}
						attempts.Add(1)
						if netnstest.Dial(pods["c"], ipB, 8080, 30*time.Millisecond) == nil {
							passed.Add(1)
						}
						time.Sleep(4 * time.Millisecond)
					}
				}()
			}
			for range 20 {
				stop()
				c, stop = startNode(t, n, srv, flags...)
				waitEndpointReady(t, c, 2)
			}
			close(done)
			wg.Wait()
			t.Logf("%d connection attempts from c to b:8080 across 20 restarts", attempts.Load())
			if passed.Load() != 0 {
				t.Fatalf("%d of %d denied connections passed during the restarts", passed.Load(), attempts.Load())
			}
			if attempts.Load() < 200 {
				t.Fatalf("only %d attempts: the traffic did not run during the restarts", attempts.Load())
			}
			wantTCP(t, pods["a"], ipB, 8080, true)
			celltest.Eventually(t, "endpoint 4 not-ready again after the restarts", func() bool {
				ep, err := c.Endpoint(t.Context(), 4)
				return err == nil && ep.State == "not-ready"
			})
		})
	}
}
