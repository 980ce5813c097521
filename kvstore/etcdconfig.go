package kvstore

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/apiary-net/apiary/cells/safefile"
)

// EtcdConfig is the etcd client configuration file that --kvstore-opt
// etcd.config names, and the format of ClusterMesh's per-cluster files:
//
//	endpoints:
//	- https://etcd.c2.example:2379
//	trusted-ca-file: /var/lib/cilium/clustermesh/c2-ca.crt
//	cert-file: /var/lib/cilium/clustermesh/c2.crt
//	key-file: /var/lib/cilium/clustermesh/c2.key
type EtcdConfig struct {
	Endpoints     []string `yaml:"endpoints"`
	TrustedCAFile string   `yaml:"trusted-ca-file"`
	CAFile        string   `yaml:"ca-file"` // alias of trusted-ca-file
	CertFile      string   `yaml:"cert-file"`
	KeyFile       string   `yaml:"key-file"`
	// InsecureSkipTLSVerify skips server certificate checks (tests only).
	InsecureSkipTLSVerify bool `yaml:"insecure-skip-tls-verify"`

	path string
}

// configFileLimits bound the etcd config file and the TLS files it
// names: regular files of at most 4 MiB (a large CA bundle is 300 KiB).
var configFileLimits = safefile.Limits{MaxSize: 4 << 20}

// readConfigFile reads a file the configuration names: a named pipe, a
// device or a huge file is an error, not a blocked or exhausted agent.
func readConfigFile(path string) ([]byte, error) {
	return safefile.Read(context.Background(), path, configFileLimits)
}

// ReadEtcdConfig reads and validates an etcd config file. Errors name the
// file and the field.
func ReadEtcdConfig(path string) (*EtcdConfig, error) {
	data, err := readConfigFile(path)
	if err != nil {
		return nil, fmt.Errorf("read etcd config: %w", err)
	}
	return ParseEtcdConfig(path, data)
}

// ParseEtcdConfig parses the YAML of an etcd config file; path is only
// used in errors and to resolve nothing else.
func ParseEtcdConfig(path string, data []byte) (*EtcdConfig, error) {
	var c EtcdConfig
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("etcd config %s: %w", path, err)
	}
	c.path = path
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("etcd config %s: %w", path, err)
	}
	return &c, nil
}

// EtcdConfigForAddress is the configuration --kvstore-opt etcd.address
// stands for.
func EtcdConfigForAddress(address string) (*EtcdConfig, error) {
	c := &EtcdConfig{Endpoints: strings.Split(address, ","), path: "--kvstore-opt etcd.address"}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("--kvstore-opt etcd.address: %w", err)
	}
	return c, nil
}

func (c *EtcdConfig) validate() error {
	if len(c.Endpoints) == 0 {
		return errors.New("field endpoints: at least one endpoint is required")
	}
	for i, ep := range c.Endpoints {
		u, err := url.Parse(ep)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "unix") || u.Host == "" && u.Scheme != "unix" {
			return fmt.Errorf("field endpoints[%d]: %q is not an http(s):// or unix:// URL", i, ep)
		}
	}
	if c.TrustedCAFile != "" && c.CAFile != "" && c.TrustedCAFile != c.CAFile {
		return errors.New("fields trusted-ca-file and ca-file name different files; set one of them")
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return errors.New("fields cert-file and key-file must be set together")
	}
	return nil
}

// CA returns the CA file (trusted-ca-file or its alias ca-file).
func (c *EtcdConfig) CA() string {
	if c.TrustedCAFile != "" {
		return c.TrustedCAFile
	}
	return c.CAFile
}

// usesTLS reports whether any endpoint is https or TLS files are set.
func (c *EtcdConfig) usesTLS() bool {
	if c.CA() != "" || c.CertFile != "" {
		return true
	}
	for _, ep := range c.Endpoints {
		if strings.HasPrefix(ep, "https://") {
			return true
		}
	}
	return false
}

// TLSConfig builds the client TLS configuration, or nil without TLS. The
// client certificate is re-read when its files change, so a rotated
// certificate is used for new connections without a restart.
func (c *EtcdConfig) TLSConfig() (*tls.Config, error) {
	if !c.usesTLS() {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: c.InsecureSkipTLSVerify}
	if ca := c.CA(); ca != "" {
		pem, err := readConfigFile(ca)
		if err != nil {
			return nil, fmt.Errorf("etcd config %s: field trusted-ca-file: %w", c.path, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("etcd config %s: field trusted-ca-file: %s holds no PEM certificate", c.path, ca)
		}
		cfg.RootCAs = pool
	}
	if c.CertFile != "" {
		kp := &reloadingKeyPair{certFile: c.CertFile, keyFile: c.KeyFile}
		if _, err := kp.load(); err != nil {
			return nil, fmt.Errorf("etcd config %s: fields cert-file/key-file: %w", c.path, err)
		}
		cfg.GetClientCertificate = kp.GetClientCertificate
	}
	return cfg, nil
}
