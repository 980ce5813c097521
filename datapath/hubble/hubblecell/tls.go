package hubblecell

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"
)

// tlsServerName is the name a relay expects in this node's certificate
// (Cilium's peer.TLSServerName): "<node>.<cluster>.hubble-grpc.cilium.io",
// dots in the names replaced by dashes.
func tlsServerName(node, cluster string) string {
	if node == "" {
		return ""
	}
	if cluster == "" {
		cluster = "default"
	}
	return strings.ReplaceAll(node, ".", "-") + "." + strings.ReplaceAll(cluster, ".", "-") + ".hubble-grpc.cilium.io"
}

// serverTLS builds the TLS configuration of --hubble-listen-address: the
// key pair is read at each handshake (a renewed certificate is used
// without a restart), client certificates are required when client CAs
// are given. The files are checked now, so that a bad one fails the
// start with the flag's name.
func serverTLS(cfg Config) (*tls.Config, error) {
	load := func() (*tls.Certificate, error) {
		c, err := tls.LoadX509KeyPair(cfg.HubbleTLSCertFile, cfg.HubbleTLSKeyFile)
		if err != nil {
			return nil, fmt.Errorf("--hubble-tls-cert-file, --hubble-tls-key-file: %w", err)
		}
		return &c, nil
	}
	if _, err := load(); err != nil {
		return nil, err
	}
	tc := &tls.Config{
		MinVersion:     tls.VersionTLS13,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return load() },
	}
	if len(cfg.HubbleTLSClientCAFiles) > 0 {
		pool := x509.NewCertPool()
		for _, f := range cfg.HubbleTLSClientCAFiles {
			pem, err := os.ReadFile(f)
			if err != nil {
				return nil, fmt.Errorf("--hubble-tls-client-ca-files: %w", err)
			}
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("--hubble-tls-client-ca-files: %s holds no PEM certificate", f)
			}
		}
		tc.ClientCAs, tc.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return tc, nil
}
