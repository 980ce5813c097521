package kvstore_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
)

func TestParseEtcdConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		give string
		want string // error substring; empty: valid
	}{
		{name: "minimal", give: "endpoints:\n- http://127.0.0.1:2379\n"},
		{name: "tls", give: "endpoints: [https://e:2379]\ntrusted-ca-file: /ca\ncert-file: /c\nkey-file: /k\n"},
		{name: "ca-file alias", give: "endpoints: [https://e:2379]\nca-file: /ca\n"},
		{name: "no endpoints", give: "trusted-ca-file: /ca\n", want: "field endpoints: at least one endpoint is required"},
		{name: "bad endpoint", give: "endpoints: [etcd:2379]\n", want: `field endpoints[0]: "etcd:2379" is not an http(s)://`},
		{name: "cert without key", give: "endpoints: [https://e:2379]\ncert-file: /c\n", want: "fields cert-file and key-file must be set together"},
		{name: "conflicting ca", give: "endpoints: [https://e:2379]\nca-file: /a\ntrusted-ca-file: /b\n", want: "trusted-ca-file and ca-file name different files"},
		{name: "unknown field", give: "endpoints: [http://e:2379]\ncert: /c\n", want: "field cert not found"},
		{name: "not yaml", give: "endpoints: [\n", want: "etcd config /etc/apiary/etcd.yaml:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := kvstore.ParseEtcdConfig("/etc/apiary/etcd.yaml", []byte(tc.give))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error = %v, want %q", err, tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), "/etc/apiary/etcd.yaml"):
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}

func TestEtcdConfigTLSFileErrors(t *testing.T) {
	srv := kvstoretest.StartServer(t, kvstoretest.WithTLS())
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		change func(*kvstore.EtcdConfig)
		want   string
	}{
		{name: "missing CA", change: func(c *kvstore.EtcdConfig) { c.TrustedCAFile = filepath.Join(dir, "nope.crt") }, want: "field trusted-ca-file: open"},
		{name: "CA not PEM", change: func(c *kvstore.EtcdConfig) { c.TrustedCAFile = garbage }, want: "field trusted-ca-file: " + garbage + " holds no PEM certificate"},
		{name: "unreadable cert", change: func(c *kvstore.EtcdConfig) { c.CertFile = garbage }, want: "fields cert-file/key-file: load client certificate " + garbage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := srv.EtcdConfig()
			tc.change(c)
			_, err := kvstore.NewEtcdBackend(kvstore.EtcdOptions{Config: c})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		give func(*kvstore.Config)
		want string
	}{
		{name: "disabled", give: func(*kvstore.Config) {}},
		{name: "etcd with address", give: func(c *kvstore.Config) {
			c.KVStore, c.KVStoreOpt = "etcd", map[string]string{"etcd.address": "http://127.0.0.1:2379", "etcd.qps": "20", "etcd.limit": "500"}
		}},
		{name: "unknown type", give: func(c *kvstore.Config) { c.KVStore = "consul" }, want: `--kvstore: unsupported type "consul"`},
		{name: "no endpoint", give: func(c *kvstore.Config) { c.KVStore = "etcd" }, want: "needs etcd.config=<file> or etcd.address=<url>"},
		{name: "unknown option", give: func(c *kvstore.Config) {
			c.KVStore, c.KVStoreOpt = "etcd", map[string]string{"etcd.config": "/x", "etcd.cofnig": "/y"}
		}, want: `unknown option "etcd.cofnig"`},
		{name: "bad qps", give: func(c *kvstore.Config) {
			c.KVStore, c.KVStoreOpt = "etcd", map[string]string{"etcd.config": "/x", "etcd.qps": "fast"}
		}, want: `etcd.qps="fast" is not a non-negative number`},
		{name: "bad limit", give: func(c *kvstore.Config) {
			c.KVStore, c.KVStoreOpt = "etcd", map[string]string{"etcd.config": "/x", "etcd.limit": "0"}
		}, want: `etcd.limit="0" is not a positive integer`},
		{name: "short ttl", give: func(c *kvstore.Config) {
			c.KVStore, c.KVStoreOpt, c.KVStoreLeaseTTL = "etcd", map[string]string{"etcd.config": "/x"}, 1
		}, want: "--kvstore-lease-ttl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := kvstore.DefaultConfig
			tc.give(&c)
			err := c.Validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Validate() = %v, want %q", err, tc.want)
			}
		})
	}
}
