package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// listFlag is a repeatable string flag.
type listFlag []string

func (f *listFlag) String() string     { return strings.Join(*f, ",") }
func (f *listFlag) Set(s string) error { *f = append(*f, s); return nil }

// serve is the `demo serve --addr A --tcp P --udp P --icmp-seen D --http
// P --http-body B` subcommand, run in a pod's namespace (or the outside
// host's): on each address and TCP port it answers the line PING with
// PONG (redis-cli's ping) and echoes any other line; on each HTTP port
// it answers every request with B; on each UDP port it sends every
// datagram back; with --icmp-seen it records the token of every lab
// ICMP and ICMPv6 message it receives as a file in D. It runs until
// SIGTERM or SIGINT.
func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var addrs, tcp, udp listFlag
	fs.Var(&addrs, "addr", "address to listen on (repeatable)")
	fs.Var(&tcp, "tcp", "TCP port (repeatable)")
	fs.Var(&udp, "udp", "UDP port (repeatable)")
	ready := fs.String("ready", "", "file to create once every socket listens")
	icmpSeen := fs.String("icmp-seen", "", "directory to record the tokens of the lab's ICMP and ICMPv6 messages received in")
	var httpPorts listFlag
	fs.Var(&httpPorts, "http", "HTTP port answering every request with --http-body (repeatable)")
	body := fs.String("http-body", "", "the body of every HTTP answer (a line is added)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var closers []func() error
	for _, a := range addrs {
		for _, p := range httpPorts {
			l, err := net.Listen("tcp", net.JoinHostPort(a, p))
			if err != nil {
				return fmt.Errorf("listen on tcp %s:%s: %w", a, p, err)
			}
			srv := &http.Server{Handler: answer(*body), ReadHeaderTimeout: 5 * time.Second}
			closers = append(closers, srv.Close)
			go func() { _ = srv.Serve(l) }()
		}
		for _, p := range tcp {
			l, err := net.Listen("tcp", net.JoinHostPort(a, p))
			if err != nil {
				return fmt.Errorf("listen on tcp %s:%s: %w", a, p, err)
			}
			closers = append(closers, l.Close)
			go acceptPings(l)
		}
		for _, p := range udp {
			c, err := net.ListenPacket("udp", net.JoinHostPort(a, p))
			if err != nil {
				return fmt.Errorf("listen on udp %s:%s: %w", a, p, err)
			}
			closers = append(closers, c.Close)
			go echoUDP(c)
		}
	}
	if *icmpSeen != "" {
		if err := os.MkdirAll(*icmpSeen, 0o700); err != nil {
			return fmt.Errorf("create %s: %w", *icmpSeen, err)
		}
		for _, f := range families {
			network, any := icmpNetwork(f)
			c, err := net.ListenPacket(network, any)
			if err != nil {
				return fmt.Errorf("listen on %s: %w", network, err)
			}
			closers = append(closers, c.Close)
			go recordICMP(c, *icmpSeen)
		}
	}
	fmt.Printf("demo serve: %s tcp %s udp %s\n", addrs.String(), tcp.String(), udp.String())
	if *ready != "" {
		if err := os.WriteFile(*ready, nil, 0o600); err != nil {
			return fmt.Errorf("write %s: %w", *ready, err)
		}
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	var errs []error
	for _, c := range closers {
		errs = append(errs, c())
	}
	return errors.Join(errs...)
}

// answer is an HTTP handler answering every request with body, as the
// seed's rebel-base (nginx serving one JSON document) does.
func answer(body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body+"\n")
	})
}

// acceptPings serves every connection of l.
func acceptPings(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			sc := bufio.NewScanner(c)
			for sc.Scan() {
				reply := sc.Text()
				if strings.EqualFold(strings.TrimSpace(reply), "PING") {
					reply = "PONG"
				}
				if _, err := c.Write([]byte(reply + "\n")); err != nil {
					return
				}
			}
		}()
	}
}

// echoUDP sends every datagram back to its sender.
func echoUDP(c net.PacketConn) {
	buf := make([]byte, 2048)
	for {
		n, from, err := c.ReadFrom(buf)
		if err != nil {
			return
		}
		_, _ = c.WriteTo(buf[:n], from)
	}
}

// selfPath is the path of this executable, which the lab runs again as
// the pods' server and to enter namespaces.
func selfPath() (string, error) {
	p, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the demo executable: %w", err)
	}
	return p, nil
}
