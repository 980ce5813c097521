package main

import (
	"io"
	"strings"
	"testing"
)

// TestEtcdConfig: `demo etcd` takes the etcd server's flags the lab
// passes, and names what is wrong.
func TestEtcdConfig(t *testing.T) {
	tests := []struct {
		name    string
		give    []string
		wantErr string
	}{
		{name: "lab flags", give: []string{"--name", "etcd-c1", "--data-dir", "/d",
			"--listen-client-urls", "https://10.0.0.1:2379", "--advertise-client-urls", "https://10.0.0.1:2379",
			"--listen-peer-urls", "http://10.0.0.1:2380", "--initial-advertise-peer-urls", "http://10.0.0.1:2380",
			"--initial-cluster", "etcd-c1=http://10.0.0.1:2380",
			"--cert-file", "s.crt", "--key-file", "s.key", "--trusted-ca-file", "ca.crt", "--client-cert-auth"}},
		{name: "no data dir", give: []string{"--name", "x"}, wantErr: "--data-dir is required"},
		{name: "bad URL", give: []string{"--data-dir", "/d", "--listen-client-urls", "10.0.0.1:2379"},
			wantErr: `invalid value "10.0.0.1:2379" for flag -listen-client-urls`},
		{name: "unknown flag", give: []string{"--data-dir", "/d", "--auto-tls"}, wantErr: "flag provided but not defined: -auto-tls"},
		{name: "argument", give: []string{"--data-dir", "/d", "extra"}, wantErr: `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := etcdConfig(tt.give, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tls := cfg.ClientTLSInfo
			if cfg.Name != "etcd-c1" || cfg.Dir != "/d" || cfg.ListenClientUrls[0].Host != "10.0.0.1:2379" ||
				cfg.AdvertisePeerUrls[0].String() != "http://10.0.0.1:2380" || cfg.InitialCluster != "etcd-c1=http://10.0.0.1:2380" ||
				tls.CertFile != "s.crt" || tls.KeyFile != "s.key" || tls.TrustedCAFile != "ca.crt" || !tls.ClientCertAuth {
				t.Errorf("got %+v", cfg)
			}
			if err := cfg.Validate(); err != nil {
				t.Errorf("validate: %v", err)
			}
		})
	}
}
