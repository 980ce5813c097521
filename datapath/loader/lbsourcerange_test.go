package loader_test

import (
	"bufio"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
	"github.com/apiary-net/apiary/datapath/maps/eventsmap"
	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
)

// TestLoadBalancerSourceRanges connects from outside (10.2.0.2,
// fd00:2::2, behind the node's device eth7 with the NodePort programs)
// to LoadBalancer frontends with loadBalancerSourceRanges: a client in
// the ranges reaches the backend; ranges without it drop its new
// connections and the packets of its established one; the closed
// sentinel (::/128) admits nobody; ranges that admit it again do.
func TestLoadBalancerSourceRanges(t *testing.T) {
	inNewNetns(t, func() {
		l := newLBLab(t, nil)
		outside := l.withOutside(t)
		lb := func(fe netip.AddrPort, ranges ...string) {
			t.Helper()
			s := datapath.LBService{Frontend: datapath.L3n4Addr{Addr: fe.Addr(), Port: fe.Port(), Proto: datapath.ProtoTCP},
				Type: datapath.SVCTypeLoadBalancer, Name: "default/lb",
				Backends: []datapath.LBBackend{{Addr: datapath.L3n4Addr{Addr: backendAddr(2, fe.Addr().Is6()), Port: 8080, Proto: datapath.ProtoTCP}}}}
			for _, r := range ranges {
				s.SourceRanges = append(s.SourceRanges, netip.MustParsePrefix(r))
			}
			if err := l.lb.UpsertService(s); err != nil {
				t.Fatal(err)
			}
		}
		dial := func(addr netip.AddrPort, timeout time.Duration) (net.Conn, *bufio.Reader, error) {
			var c net.Conn
			err := netnsutil.Run(outside, func() error {
				var err error
				c, err = net.DialTimeout("tcp", addr.String(), timeout)
				return err
			})
			if err != nil {
				return nil, nil, err
			}
			c.SetDeadline(time.Now().Add(safety))
			r := bufio.NewReader(c)
			if name, err := r.ReadString('\n'); err != nil || strings.TrimSpace(name) != "b2" {
				c.Close()
				return nil, nil, fmt.Errorf("answered %q, %v; want b2", name, err)
			}
			return c, r, nil
		}
		reaches := func(fe netip.AddrPort) {
			t.Helper()
			c, _, err := dial(fe, safety)
			if err != nil {
				t.Fatalf("client in the source ranges to %v: %v", fe, err)
			}
			c.Close()
		}
		dropped := func(fe netip.AddrPort) {
			t.Helper()
			if c, _, err := dial(fe, time.Second); err == nil {
				c.Close()
				t.Fatalf("a client outside the source ranges reached %v", fe)
			}
		}

		fe4 := netip.MustParseAddrPort("192.0.2.100:80")
		lb(fe4, "10.2.0.0/24", "172.16.0.0/12")
		reaches(fe4)
		// An established connection, then ranges without the client.
		c, r, err := dial(fe4, safety)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		lb(fe4, "172.16.0.0/12")
		l.h.drain(t)
		dropped(fe4)
		// The drop is reported as the endpoint programs report theirs: a
		// drop event (Cilium's reason 177) from the client, naming the
		// service by its rev-NAT index, and counted in the metrics.
		var seen *eventsmap.Event
		for _, ev := range l.h.drain(t) {
			if ev.Type == eventsmap.TypeDrop && ev.Dst == fe4 {
				seen = &ev
			}
		}
		if seen == nil || seen.Reason != eventsmap.ReasonSourceRange || seen.Src.Addr() != netip.MustParseAddr("10.2.0.2") ||
			seen.EndpointID != 0 || seen.Direction != policy.Ingress || seen.RevNAT == 0 || seen.SrcIdentity != identity.ReservedWorldIPv4 ||
			seen.DstIdentity != identity.ReservedWorldIPv4 {
			t.Errorf("the source-range drop's event %+v", seen)
		}
		fmt.Fprintln(c, "still there?")
		c.SetReadDeadline(time.Now().Add(time.Second))
		if line, err := r.ReadString('\n'); err == nil {
			t.Errorf("the established connection of a client the ranges no longer admit echoed %q", line)
		}
		lb(fe4, "10.2.0.2/32")
		reaches(fe4)
		lb(fe4) // no ranges: everyone
		reaches(fe4)

		fe6 := netip.MustParseAddrPort("[2001:db8::100]:80")
		lb(fe6, "fd00:2::/64")
		reaches(fe6)
		lb(fe6, "::/128") // closed
		dropped(fe6)
	})
}
