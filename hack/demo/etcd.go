package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os/signal"
	"strings"
	"syscall"

	"go.etcd.io/etcd/server/v3/embed"
)

// etcdServer is the `demo etcd [flags]` subcommand: a cluster's etcd
// server (go.etcd.io/etcd/server/v3/embed) in its own process, stopped by
// SIGTERM or SIGINT. Its flags are the etcd server's of the same names,
// so the runner passes the same arguments to it or to an etcd binary
// (--etcd). Building it into the demo shares the gRPC and etcd packages
// the agent compiles anyway: the first `make demo` builds no separate
// etcd server.
func etcdServer(args []string, stderr io.Writer) error {
	cfg, err := etcdConfig(args, stderr)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return fmt.Errorf("start etcd: %w", err)
	}
	defer e.Close()
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		return fmt.Errorf("run etcd: %w", err)
	case <-ctx.Done():
		return nil
	}
	select {
	case err := <-e.Err():
		return fmt.Errorf("run etcd: %w", err)
	case <-ctx.Done():
		return nil
	}
}

// etcdConfig parses the etcd flags the lab uses into an embed
// configuration.
func etcdConfig(args []string, stderr io.Writer) (*embed.Config, error) {
	cfg := embed.NewConfig()
	fs := flag.NewFlagSet("demo etcd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	urls := map[string]*[]url.URL{
		"listen-client-urls":          &cfg.ListenClientUrls,
		"advertise-client-urls":       &cfg.AdvertiseClientUrls,
		"listen-peer-urls":            &cfg.ListenPeerUrls,
		"initial-advertise-peer-urls": &cfg.AdvertisePeerUrls,
	}
	for name, dst := range urls {
		fs.Func(name, "comma-separated URLs", func(s string) error { return parseURLs(s, dst) })
	}
	fs.StringVar(&cfg.Name, "name", cfg.Name, "member name")
	fs.StringVar(&cfg.Dir, "data-dir", "", "data directory")
	fs.StringVar(&cfg.InitialCluster, "initial-cluster", "", "name=peer URL of every member")
	fs.StringVar(&cfg.ClientTLSInfo.CertFile, "cert-file", "", "server certificate for clients")
	fs.StringVar(&cfg.ClientTLSInfo.KeyFile, "key-file", "", "key of --cert-file")
	fs.StringVar(&cfg.ClientTLSInfo.TrustedCAFile, "trusted-ca-file", "", "CA of the client certificates")
	fs.BoolVar(&cfg.ClientTLSInfo.ClientCertAuth, "client-cert-auth", false, "require client certificates")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("demo etcd: unexpected argument %q", fs.Arg(0))
	}
	if cfg.Dir == "" {
		return nil, errors.New("demo etcd: --data-dir is required")
	}
	// The agents speak gRPC. The HTTP/JSON gateway would hold a gRPC
	// connection to the server itself, which keeps a TLS server's
	// shutdown waiting for its request timeout (about 5 s).
	cfg.EnableGRPCGateway = false
	return cfg, nil
}

// parseURLs parses a comma-separated list of URLs into dst.
func parseURLs(s string, dst *[]url.URL) error {
	var out []url.URL
	for _, part := range strings.Split(s, ",") {
		u, err := url.Parse(part)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return fmt.Errorf("not a URL with a scheme and a host: %q", part)
		}
		out = append(out, *u)
	}
	*dst = out
	return nil
}
