package loader_test

import (
	"bufio"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
	"github.com/apiary-net/apiary/policy"
)

// TestTwoScopes gives a LoadBalancer frontend (externalTrafficPolicy
// Local) the node's backend b1 in its external entry and b1..b3 in its
// internal one: connections from the client endpoint (inside the
// cluster, from_container) reach all three, connections from outside
// (through the node's device and the NodePort programs) only b1; with
// the internal entry gone, the endpoint falls back to the external one.
func TestTwoScopes(t *testing.T) {
	inNewNetns(t, func() {
		l := newLBLab(t, policy.MapState{key(0, policy.Egress, policy.ProtoTCP, 8080, 16): allow})
		outside := l.withOutside(t)
		fe := netip.MustParseAddrPort("192.0.2.100:80")
		entry := func(scope uint8, backends ...int) datapath.LBService {
			s := datapath.LBService{Frontend: datapath.L3n4Addr{Addr: fe.Addr(), Port: fe.Port(), Proto: datapath.ProtoTCP, Scope: scope},
				Type: datapath.SVCTypeLoadBalancer, Name: "default/web"}
			for _, i := range backends {
				s.Backends = append(s.Backends, datapath.LBBackend{Addr: datapath.L3n4Addr{Addr: backendAddr(i, false), Port: 8080, Proto: datapath.ProtoTCP}})
			}
			return s
		}
		ext := entry(datapath.ScopeExternal, 1)
		ext.LocalOnly, ext.TwoScopes = true, true
		for _, s := range []datapath.LBService{ext, entry(datapath.ScopeInternal, 1, 2, 3)} {
			if err := l.lb.UpsertService(s); err != nil {
				t.Fatal(err)
			}
		}
		if seen := l.names(t, fe, 30); len(seen) != 3 {
			t.Errorf("30 connections from inside reached %v, want b1, b2 and b3 (the internal scope)", seen)
		}
		outsideNames := map[string]int{}
		for range 10 {
			var c net.Conn
			err := netnsutil.Run(outside, func() error {
				var err error
				c, err = net.DialTimeout("tcp", fe.String(), safety)
				return err
			})
			if err != nil {
				t.Fatalf("connect from outside: %v", err)
			}
			c.SetDeadline(time.Now().Add(safety))
			name, err := bufio.NewReader(c).ReadString('\n')
			c.Close()
			if err != nil {
				t.Fatal(err)
			}
			outsideNames[strings.TrimSpace(name)]++
		}
		if len(outsideNames) != 1 || outsideNames["b1"] != 10 {
			t.Errorf("10 connections from outside reached %v, want b1 only (the external scope)", outsideNames)
		}
		in := entry(datapath.ScopeInternal).Frontend
		if err := l.lb.DeleteService(in); err != nil {
			t.Fatal(err)
		}
		if seen := l.names(t, fe, 10); len(seen) != 1 || seen["b1"] != 10 {
			t.Errorf("without the internal entry, connections from inside reached %v, want b1 only", seen)
		}
	})
}
