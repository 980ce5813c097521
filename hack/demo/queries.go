package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cmd/apiary/cli"
	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
	"github.com/apiary-net/apiary/policy/simulate"
)

// queryTimeout is how long a query waits for its answer: a denied flow
// is a timeout.
const queryTimeout = 1500 * time.Millisecond

// seen is what a query's connection saw.
type seen struct {
	answered bool   // PONG (TCP) or the echo (UDP) came back
	what     string // "PONG", "echo", "timeout", or the error
	local    netip.AddrPort
	took     time.Duration
}

// addrs returns the lab addresses of the query's two sides.
func (q *query) addrs() (from, to netip.Addr) {
	from, to = q.from.addr, q.to.addr
	if q.from.pod != nil {
		from = q.from.pod.ips[q.fam]
	}
	if q.to.pod != nil {
		to = q.to.pod.ips[q.fam]
	}
	return from, to
}

// sourceNS is the namespace the query's connection starts in.
func (q *query) sourceNS() string {
	if q.from.pod != nil {
		return nsPath(podNS(q.from.pod))
	}
	return nsPath(outsideNS)
}

// run opens the query's connection (or sends its ICMP message) from its
// source's namespace.
func (q *query) run() seen {
	from, to := q.addrs()
	dst := netip.AddrPortFrom(to, q.model.Port)
	var s seen
	start := time.Now()
	if isICMP(string(q.model.Protocol)) {
		src := netip.Addr{}
		if q.from.pod == nil {
			src = from
		}
		var err error
		s, err = sendICMP(q.sourceNS(), q.fam, src, to, q.model.Port, dir("icmp"), queryTimeout)
		s.took = time.Since(start)
		if err != nil {
			s.what = err.Error()
		}
		return s
	}
	err := netnsutil.RunPath(q.sourceNS(), func() error {
		d := net.Dialer{Timeout: queryTimeout}
		if q.from.pod == nil {
			d.LocalAddr = &net.TCPAddr{IP: from.AsSlice()}
			if q.model.Protocol == "UDP" {
				d.LocalAddr = &net.UDPAddr{IP: from.AsSlice()}
			}
		}
		var err error
		s, err = exchange(&d, strings.ToLower(string(q.model.Protocol)), dst.String())
		return err
	})
	s.took = time.Since(start)
	if err != nil {
		s.what = err.Error()
	}
	return s
}

// exchange dials and sends PING, waiting for PONG (TCP) or the echo (UDP).
func exchange(d *net.Dialer, network, addr string) (seen, error) {
	c, err := d.Dial(network, addr)
	if err != nil {
		if isTimeout(err) {
			return seen{what: "timeout"}, nil
		}
		return seen{}, err
	}
	defer c.Close()
	s := seen{}
	if ap, err := netip.ParseAddrPort(c.LocalAddr().String()); err == nil {
		s.local = ap
	}
	_ = c.SetDeadline(time.Now().Add(queryTimeout))
	if _, err := c.Write([]byte("PING\n")); err != nil {
		return s, err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	switch {
	case isTimeout(err):
		s.what = "timeout"
		return s, nil
	case err != nil:
		return s, err
	}
	want, got := "PONG", strings.TrimSpace(line)
	if network == "udp" {
		want = "PING"
	}
	if got != want {
		return s, fmt.Errorf("answer %q, want %q", got, want)
	}
	s.answered, s.what = true, "PONG"
	if network == "udp" {
		s.what = "echo"
	}
	return s, nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// monitors collects the drop events of every agent's monitor stream.
type monitors struct {
	mu     sync.Mutex
	events []drop
	wg     sync.WaitGroup
}

// drop is a drop event and the node whose agent reported it.
type drop struct {
	node string
	msg  models.MonitorMessage
}

// watch streams the drops of every agent until ctx ends.
func (l *lab) watch(ctx context.Context) *monitors {
	m := &monitors{}
	for _, c := range l.p.clusters {
		for _, n := range c.nodes {
			ready := make(chan struct{})
			m.wg.Go(func() {
				once := sync.OnceFunc(func() { close(ready) })
				defer once()
				for msg, err := range l.client[n].Monitor(ctx, "drop") {
					if err != nil {
						return
					}
					if msg.MonitorEvent == nil {
						once() // subscribed
						continue
					}
					m.mu.Lock()
					m.events = append(m.events, drop{node: n.name, msg: msg})
					m.mu.Unlock()
				}
			})
			select {
			case <-ready:
			case <-time.After(5 * time.Second):
				fmt.Fprintf(os.Stderr, "warning: the monitor of %s did not subscribe within 5s\n", n.name)
			}
		}
	}
	return m
}

// find returns the first drop of the flow from -> to:port/proto (for
// ICMP and ICMPv6 the port is the type), waiting up to a second for it;
// from's port is matched when known (a TCP dial that timed out has none:
// its SYN's port is not known).
func (m *monitors) find(from netip.AddrPort, src netip.Addr, to netip.Addr, port uint16, proto string) (drop, bool) {
	deadline := time.Now().Add(time.Second)
	for {
		m.mu.Lock()
		for _, d := range m.events {
			e := d.msg.MonitorEvent
			flow := e.Destination.Port == port
			if isICMP(proto) {
				flow = e.ICMPType != nil && uint16(*e.ICMPType) == port
			}
			if e.Source.IP == src.String() && (from.Port() == 0 || e.Source.Port == from.Port()) &&
				e.Destination.IP == to.String() && flow && e.Protocol == proto {
				m.mu.Unlock()
				return d, true
			}
		}
		m.mu.Unlock()
		if time.Now().After(deadline) {
			return drop{}, false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// queryParallelism is how many queries run at once: a denied query
// waits for its timeout, so running them one by one would make a lab's
// run mostly waiting.
const queryParallelism = 8

// runAll runs the queries, at most queryParallelism at once, and returns
// what each saw, in order.
func runAll(queries []*query) []seen {
	out := make([]seen, len(queries))
	sem := make(chan struct{}, queryParallelism)
	var wg sync.WaitGroup
	for i, q := range queries {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			out[i] = q.run()
		})
	}
	wg.Wait()
	return out
}

// runQueries runs every query, prints simulate's line with the verdict
// the packets gave and what was seen, in the file's order, and returns
// the queries whose verdict differs from simulate's.
func (l *lab) runQueries(mons *monitors) []string {
	var diffs []string
	results := runAll(l.p.queries)
	for i, q := range l.p.queries {
		s := results[i]
		got := q.result
		got.Verdict = simulate.Denied
		if s.answered {
			got.Verdict = simulate.Allowed
		}
		fmt.Fprintln(l.out, got.String())
		from, to := q.addrs()
		dst := netip.AddrPortFrom(to, q.model.Port).String()
		if isICMP(string(q.model.Protocol)) {
			dst = fmt.Sprintf("%s %s type %d", to, q.model.Protocol, q.model.Port)
		}
		fmt.Fprintf(l.out, "  seen: %s (%s -> %s, %s)\n", s.what, from, dst, s.took.Round(time.Millisecond))
		if !s.answered {
			if d, ok := mons.find(s.local, from, to, q.model.Port, string(q.model.Protocol)); ok {
				fmt.Fprintf(l.out, "  monitor of %s: %s\n", d.node, cli.MonitorLine(d.msg))
				if line, err := l.hubbleDrop(d.node, d.msg); err == nil {
					fmt.Fprintf(l.out, "  hubble observe on %s: %s\n", d.node, line)
				} else {
					fmt.Fprintf(l.out, "  hubble observe on %s: %v\n", d.node, err)
				}
			} else {
				fmt.Fprintln(l.out, "  monitor: no drop event for this flow")
			}
		}
		if !s.answered && s.what != "timeout" {
			diffs = append(diffs, fmt.Sprintf("%s: the connection failed: %s", q.result.String(), s.what))
		} else if got.Verdict != q.result.Verdict {
			diffs = append(diffs, fmt.Sprintf("%s: simulate says %s", got.String(), strings.ToUpper(q.result.Verdict)))
		}
	}
	return diffs
}
