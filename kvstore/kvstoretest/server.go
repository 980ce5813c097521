package kvstoretest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/apiary-net/apiary/kvstore"
)

// Server is a real etcd server embedded in the test process.
type Server struct {
	t      testing.TB
	dir    string
	scheme string
	port   string
	tls    *ServerTLS
	etcd   *embed.Etcd
	proxy  *proxy
}

// ServerTLS are the TLS files of a server started WithTLS.
type ServerTLS struct {
	// CA signs the server and client certificates.
	CA *CA
	// TrustedCAFile is what the server trusts for client certificates.
	TrustedCAFile string
	Server        KeyPair
	Client        KeyPair
}

// Option configures StartServer.
type Option func(*Server)

// WithTLS serves https and requires client certificates signed by a CA
// made for the test.
func WithTLS() Option {
	return func(s *Server) { s.scheme = "https" }
}

// StartServer starts an etcd server on 127.0.0.1 (random port) with its
// data in a temporary directory; it is stopped when the test ends.
func StartServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := &Server{t: t, dir: t.TempDir(), scheme: "http", port: "0"}
	for _, o := range opts {
		o(s)
	}
	if s.scheme == "https" {
		ca := NewCA(t, s.dir, "etcd")
		s.tls = &ServerTLS{
			CA:            ca,
			TrustedCAFile: ca.CertFile,
			Server:        ca.Issue(t, "etcd-server", "server"),
			Client:        ca.Issue(t, "apiary-agent", "client"),
		}
	}
	s.Start()
	p, err := newProxy("127.0.0.1:" + s.port)
	if err != nil {
		t.Fatalf("kvstoretest: proxy: %v", err)
	}
	s.proxy = p
	t.Cleanup(func() {
		s.Stop()
		p.close()
	})
	return s
}

// TLS returns the server's TLS files (nil without WithTLS).
func (s *Server) TLS() *ServerTLS { return s.tls }

// SetTrustedCA makes the server trust another CA file for client
// certificates from the next (re)start on.
func (s *Server) SetTrustedCA(path string) { s.tls.TrustedCAFile = path }

// Start starts the server (again) on the same port and data directory.
func (s *Server) Start() {
	s.t.Helper()
	if s.etcd != nil {
		return
	}
	cfg := embed.NewConfig()
	cfg.Name = "kvstoretest"
	cfg.Dir = s.dataDir()
	cfg.LogLevel = "error"
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	client := url.URL{Scheme: s.scheme, Host: "127.0.0.1:" + s.port}
	peer := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	cfg.ListenClientUrls = []url.URL{client}
	cfg.AdvertiseClientUrls = []url.URL{client}
	cfg.ListenPeerUrls = []url.URL{peer}
	cfg.AdvertisePeerUrls = []url.URL{{Scheme: "http", Host: "127.0.0.1:2380"}}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	if s.tls != nil {
		cfg.ClientTLSInfo = transport.TLSInfo{
			CertFile:       s.tls.Server.CertFile,
			KeyFile:        s.tls.Server.KeyFile,
			TrustedCAFile:  s.tls.TrustedCAFile,
			ClientCertAuth: true,
		}
	}
	e, err := startWithRetry(cfg)
	if err != nil {
		s.t.Fatalf("kvstoretest: start etcd: %v", err)
	}
	s.etcd = e
	_, s.port, _ = splitPort(e.Clients[0].Addr().String())
	if s.proxy != nil {
		s.proxy.resume()
	}
}

// dataDir is where the server keeps its data.
func (s *Server) dataDir() string { return filepath.Join(s.dir, "data") }

// startWithRetry retries briefly: a restart may race the old listener's
// port release.
func startWithRetry(cfg *embed.Config) (*embed.Etcd, error) {
	var lastErr error
	for range 50 {
		e, err := embed.StartEtcd(cfg)
		if err == nil {
			select {
			case <-e.Server.ReadyNotify():
				return e, nil
			case <-time.After(30 * time.Second):
				e.Close()
				return nil, fmt.Errorf("etcd not ready after 30s")
			}
		}
		lastErr = err
		time.Sleep(100 * time.Millisecond)
	}
	return nil, lastErr
}

func splitPort(addr string) (string, string, error) {
	u, err := url.Parse("tcp://" + addr)
	if err != nil {
		return "", "", err
	}
	return u.Hostname(), u.Port(), nil
}

// Stop stops the server; its data and port are kept for Start. Clients'
// connections are cut first, as when a real server dies.
func (s *Server) Stop() {
	if s.etcd == nil {
		return
	}
	if s.proxy != nil {
		s.proxy.pause()
	}
	s.etcd.Close()
	s.etcd = nil
}

// Partition cuts every client connection and refuses new ones until
// Heal; the server keeps running (and keeps expiring leases).
func (s *Server) Partition() { s.proxy.pause() }

// Blackhole cuts every client connection, then accepts new ones but
// answers nothing on them until Heal, as when a firewall drops the
// packets: clients hang instead of being refused.
func (s *Server) Blackhole() { s.proxy.drop() }

// Heal ends a Partition or a Blackhole.
func (s *Server) Heal() { s.proxy.resume() }

// Restart stops and starts the server.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.Start()
}

// Endpoint returns the client URL, e.g. http://127.0.0.1:40123. It
// leads through the test's proxy, so Partition and Stop cut it.
func (s *Server) Endpoint() string {
	return fmt.Sprintf("%s://%s", s.scheme, s.proxy.addr())
}

// DirectEndpoint is the server's own client URL, bypassing the proxy.
func (s *Server) DirectEndpoint() string {
	return fmt.Sprintf("%s://127.0.0.1:%s", s.scheme, s.port)
}

// EtcdConfig returns a client configuration for the server (with the
// client certificate when the server uses TLS).
func (s *Server) EtcdConfig() *kvstore.EtcdConfig {
	c := &kvstore.EtcdConfig{Endpoints: []string{s.Endpoint()}}
	if s.tls != nil {
		c.TrustedCAFile = s.tls.CA.CertFile
		c.CertFile = s.tls.Client.CertFile
		c.KeyFile = s.tls.Client.KeyFile
	}
	return c
}

// WriteConfigFile writes the client configuration as a YAML file, the
// form --kvstore-opt etcd.config and ClusterMesh read.
func (s *Server) WriteConfigFile() string {
	s.t.Helper()
	c := s.EtcdConfig()
	data := fmt.Sprintf("endpoints:\n- %s\n", c.Endpoints[0])
	if s.tls != nil {
		data += fmt.Sprintf("trusted-ca-file: %s\ncert-file: %s\nkey-file: %s\n", c.TrustedCAFile, c.CertFile, c.KeyFile)
	}
	path := filepath.Join(s.dir, "etcd-config.yaml")
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		s.t.Fatal(err)
	}
	return path
}

// Client returns a raw etcd client, connected directly (not through the
// proxy), for the test to poke at the server behind the backend's back;
// it is closed when the test ends. After Restart, take a new one.
func (s *Server) Client() *clientv3.Client {
	s.t.Helper()
	c := s.EtcdConfig()
	c.Endpoints = []string{s.DirectEndpoint()}
	tlsCfg, err := c.TLSConfig()
	if err != nil {
		s.t.Fatal(err)
	}
	cl, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints, TLS: tlsCfg, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		s.t.Fatalf("kvstoretest: client: %v", err)
	}
	s.t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// Compact compacts the server's history up to its current revision, so
// watches from older revisions fail with ErrCompacted.
func (s *Server) Compact() int64 {
	s.t.Helper()
	cl := s.Client()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cl.Get(ctx, "compact-probe")
	if err != nil {
		s.t.Fatalf("kvstoretest: compact: %v", err)
	}
	rev := resp.Header.Revision
	if _, err := cl.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil {
		s.t.Fatalf("kvstoretest: compact: %v", err)
	}
	return rev
}

// NewBackend returns an etcd Backend connected to the server, closed when
// the test ends. Options tweak the defaults (short status interval, no
// heartbeat check).
func (s *Server) NewBackend(opts ...func(*kvstore.EtcdOptions)) kvstore.Backend {
	s.t.Helper()
	o := kvstore.EtcdOptions{Config: s.EtcdConfig(), StatusInterval: 100 * time.Millisecond, HeartbeatTimeout: -1}
	for _, f := range opts {
		f(&o)
	}
	b, err := kvstore.NewEtcdBackend(o)
	if err != nil {
		s.t.Fatalf("kvstoretest: backend: %v", err)
	}
	s.t.Cleanup(b.Close)
	return b
}

// MeshConfig returns the YAML of a ClusterMesh config file for the
// server as cluster name, with the TLS files copied into dir as
// <name>-ca.crt, <name>.crt and <name>.key and named relative to it (as
// a mounted clustermesh secret holds them).
func (s *Server) MeshConfig(dir, name string) string {
	s.t.Helper()
	data := fmt.Sprintf("endpoints:\n- %s\n", s.Endpoint())
	if s.tls == nil {
		return data
	}
	for from, to := range map[string]string{s.tls.CA.CertFile: name + "-ca.crt", s.tls.Client.CertFile: name + ".crt", s.tls.Client.KeyFile: name + ".key"} {
		b, err := os.ReadFile(from)
		if err != nil {
			s.t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, to), b, 0o600); err != nil {
			s.t.Fatal(err)
		}
	}
	return data + fmt.Sprintf("trusted-ca-file: %s-ca.crt\ncert-file: %s.crt\nkey-file: %s.key\n", name, name, name)
}

// WriteMeshConfig writes MeshConfig into dir/name, renamed into place
// (a ClusterMesh config directory watcher never reads half a file).
func (s *Server) WriteMeshConfig(dir, name string) {
	s.t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path+".tmp", []byte(s.MeshConfig(dir, name)), 0o600); err != nil {
		s.t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		s.t.Fatal(err)
	}
}

// Value returns the value at key, read directly from the server ("" when
// there is none).
func (s *Server) Value(key string) string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := s.Client().Get(ctx, key)
	if err != nil {
		s.t.Fatal(err)
	}
	if len(resp.Kvs) == 0 {
		return ""
	}
	return string(resp.Kvs[0].Value)
}
