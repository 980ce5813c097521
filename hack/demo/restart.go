package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
	"github.com/apiary-net/apiary/policy/simulate"
)

// restartRound stops and starts the agent of a pod of the scenario's
// cluster that an allowed TCP query reaches, with that connection open:
// the connection must keep answering, and every denied query to or from
// a pod of that node must stay denied, while the agent is down and after
// it is back; a new connection of the allowed query must work after.
func (l *lab) restartRound(ctx context.Context) error {
	allowed, denied := l.restartQueries()
	if allowed == nil || len(denied) == 0 {
		return errors.New("the scenario has no allowed TCP query to a pod of its cluster, or no denied query")
	}
	n := allowed.to.pod.node
	fmt.Fprintf(l.out, "\nRestart round: %s stays open while the agent of %s restarts; %d denied queries stay denied\n",
		allowed.result.String(), n.name, len(denied))
	conn, err := allowed.open()
	if err != nil {
		return fmt.Errorf("open %s: %w", allowed.result.String(), err)
	}
	defer conn.Close()
	check := func(when string) error {
		var errs []error
		if err := ping(conn); err != nil {
			errs = append(errs, fmt.Errorf("%s: the open connection: %w", when, err))
		} else {
			fmt.Fprintf(l.out, "  %s: open connection %s -> %s: PONG\n", when, conn.LocalAddr(), conn.RemoteAddr())
		}
		for i, s := range runAll(denied) {
			fmt.Fprintf(l.out, "  %s: %s: %s\n", when, denied[i].result.String(), s.what)
			if s.answered || s.what != "timeout" {
				errs = append(errs, fmt.Errorf("%s: %s: %s, want timeout", when, denied[i].result.String(), s.what))
			}
		}
		return errors.Join(errs...)
	}
	if err := check("before"); err != nil {
		return err
	}
	l.agents[n].stop(30 * time.Second)
	fmt.Fprintf(l.out, "  stopped the agent of %s\n", n.name)
	errDown := check("agent down")
	start := time.Now()
	if err := l.startAgent(n); err != nil {
		return errors.Join(errDown, err)
	}
	if err := l.waitRestarted(ctx, n); err != nil {
		return errors.Join(errDown, err)
	}
	fmt.Fprintf(l.out, "  started the agent of %s again: its pods ready in %s\n", n.name, time.Since(start).Round(10*time.Millisecond))
	errUp := check("agent back")
	s := allowed.run()
	fmt.Fprintf(l.out, "  agent back: new connection %s: %s\n", allowed.result.String(), s.what)
	if !s.answered {
		errUp = errors.Join(errUp, fmt.Errorf("agent back: new connection %s: %s", allowed.result.String(), s.what))
	}
	return errors.Join(errDown, errUp)
}

// restartQueries picks an allowed TCP query to a pod of the scenario's
// cluster and the denied queries involving a pod of that pod's node.
func (l *lab) restartQueries() (allowed *query, denied []*query) {
	local := l.p.cluster("")
	for _, q := range l.p.queries {
		if allowed == nil && q.result.Verdict == simulate.Allowed && q.model.Protocol == "TCP" &&
			q.to.pod != nil && q.to.pod.cluster == local && !q.model.Self {
			allowed = q
		}
	}
	if allowed == nil {
		return nil, nil
	}
	n := allowed.to.pod.node
	for _, q := range l.p.queries {
		if q.result.Verdict == simulate.Denied && ((q.to.pod != nil && q.to.pod.node == n) || (q.from.pod != nil && q.from.pod.node == n)) {
			denied = append(denied, q)
		}
	}
	return allowed, denied
}

// waitRestarted waits for node n's agent, its mesh and its pods.
func (l *lab) waitRestarted(ctx context.Context, n *node) error {
	if err := l.waitAgent(ctx, n); err != nil {
		return err
	}
	for _, po := range n.pods {
		err := poll(ctx, 90*time.Second, "restored pod "+po.ref, func() (bool, error) {
			ep, err := l.client[n].Endpoint(ctx, po.id)
			return err == nil && ep.State == "ready", nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// open opens the query's TCP connection from its source's namespace.
func (q *query) open() (net.Conn, error) {
	_, to := q.addrs()
	var c net.Conn
	err := netnsutil.RunPath(q.sourceNS(), func() error {
		var err error
		c, err = net.DialTimeout("tcp", netip.AddrPortFrom(to, q.model.Port).String(), 5*time.Second)
		return err
	})
	return c, err
}

// ping sends PING on c and wants PONG.
func ping(c net.Conn) error {
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := c.Write([]byte("PING\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "PONG" {
		return fmt.Errorf("answer %q, want PONG", line)
	}
	return nil
}
