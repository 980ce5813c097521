package kvstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
)

// waitStatus polls the backend's status until ok accepts it.
func waitStatus(t *testing.T, b kvstore.Backend, what string, ok func(kvstore.Status) bool) kvstore.Status {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st := b.Status()
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("status never became %s; last: %s %s", what, st.State, st.Message)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func isOK(st kvstore.Status) bool { return st.State == kvstore.StateOK }

func TestStatusLineConnected(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	b := srv.NewBackend()
	st := waitStatus(t, b, "Ok", isOK)
	want := regexp.MustCompile(`^etcd: 1/1 connected, leases=0, lock leases=0, has-quorum=true: ` +
		regexp.QuoteMeta(srv.Endpoint()) + ` - 3\.\d+\.\d+ \(Leader\)$`)
	if !want.MatchString(st.Message) {
		t.Errorf("status = %q, want Cilium's format %s", st.Message, want)
	}
}

func TestStatusUnreachableEndpoint(t *testing.T) {
	b, err := kvstore.NewEtcdBackend(kvstore.EtcdOptions{
		Config:              &kvstore.EtcdConfig{Endpoints: []string{"http://127.0.0.1:1"}},
		StatusInterval:      100 * time.Millisecond,
		ConnectivityTimeout: 500 * time.Millisecond,
		HeartbeatTimeout:    -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	// Until a second check fails, the line says the client is connecting.
	if st := b.Status(); st.State != kvstore.StateConnecting || !strings.Contains(st.Message, "connecting to http://127.0.0.1:1") {
		t.Errorf("status right after the start = %s %q, want Connecting", st.State, st.Message)
	}
	st := waitStatus(t, b, "a failure with retry info", func(st kvstore.Status) bool {
		return strings.Contains(st.Message, "consecutive failed checks")
	})
	for _, want := range []string{"not able to connect to any etcd endpoints", "next in 100ms", "http://127.0.0.1:1"} {
		if st.State != kvstore.StateFailure || !strings.Contains(st.Message, want) {
			t.Errorf("status = %s %q, want Failure mentioning %q", st.State, st.Message, want)
		}
	}
}

func TestStatusFollowsPartition(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	b := srv.NewBackend(func(o *kvstore.EtcdOptions) { o.ConnectivityTimeout = 500 * time.Millisecond })
	waitStatus(t, b, "Ok", isOK)
	srv.Partition()
	waitStatus(t, b, "Failure", func(st kvstore.Status) bool { return st.State == kvstore.StateFailure })
	srv.Heal()
	waitStatus(t, b, "Ok again", isOK)
}

func TestStatusHeartbeat(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	b := srv.NewBackend(func(o *kvstore.EtcdOptions) { o.HeartbeatTimeout = 300 * time.Millisecond })
	st := waitStatus(t, b, "failing for lack of heartbeats", func(st kvstore.Status) bool {
		return strings.Contains(st.Message, "quorum check failed")
	})
	if st.State != kvstore.StateFailure || !strings.Contains(st.Message, "no heartbeat update received") {
		t.Errorf("status = %s %q, want a Failure saying no heartbeat was received", st.State, st.Message)
	}
	stop := kvstore.StartHeartbeat(b, 100*time.Millisecond, nil)
	defer stop()
	waitStatus(t, b, "Ok with a heartbeat writer", isOK)
}

func TestStatusNamesTLSFailure(t *testing.T) {
	srv := kvstoretest.StartServer(t, kvstoretest.WithTLS())
	cfg := srv.EtcdConfig()
	other := kvstoretest.NewCA(t, t.TempDir(), "not-the-etcd-ca")
	cfg.TrustedCAFile = other.CertFile
	b, err := kvstore.NewEtcdBackend(kvstore.EtcdOptions{
		Config: cfg, StatusInterval: 100 * time.Millisecond, ConnectivityTimeout: time.Second, HeartbeatTimeout: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	st := waitStatus(t, b, "a TLS failure", func(st kvstore.Status) bool { return strings.Contains(st.Message, "TLS") })
	want := srv.Endpoint() + " - TLS handshake failed"
	if !strings.Contains(st.Message, want) || !strings.Contains(st.Message, "certificate") {
		t.Errorf("status = %q, want %q and the certificate error", st.Message, want)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	celltest.ReplaceFile(t, to, string(data))
}

func TestRotatedClientCertificateIsUsed(t *testing.T) {
	srv := kvstoretest.StartServer(t, kvstoretest.WithTLS())
	dir := t.TempDir()
	ca2 := kvstoretest.NewCA(t, dir, "ca2")
	srv.SetTrustedCA(kvstoretest.Bundle(t, filepath.Join(dir, "both.crt"), srv.TLS().CA, ca2))
	srv.Restart()

	// The agent's certificate files, as a Secret mount would hold them.
	cfg := srv.EtcdConfig()
	cfg.CertFile, cfg.KeyFile = filepath.Join(dir, "agent.crt"), filepath.Join(dir, "agent.key")
	copyFile(t, srv.TLS().Client.CertFile, cfg.CertFile)
	copyFile(t, srv.TLS().Client.KeyFile, cfg.KeyFile)
	b, err := kvstore.NewEtcdBackend(kvstore.EtcdOptions{Config: cfg, StatusInterval: 100 * time.Millisecond, HeartbeatTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	waitStatus(t, b, "Ok with the first certificate", isOK)

	// Rotate to a certificate of the second CA, then make the server
	// trust only that CA: only the rotated certificate can connect.
	rotated := ca2.Issue(t, "apiary-agent", "rotated")
	copyFile(t, rotated.KeyFile, cfg.KeyFile)
	copyFile(t, rotated.CertFile, cfg.CertFile)
	srv.SetTrustedCA(ca2.CertFile)
	srv.Restart()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := b.Update(ctx, "cilium/state/after-rotation", []byte("ok"), false); err != nil {
		t.Fatalf("write after rotation: %v (the rotated certificate was not used)", err)
	}
}

func TestAtMost1000KeysPerLease(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	b := srv.NewBackend()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range 1001 {
		must(t, b.Update(ctx, fmt.Sprintf("cilium/state/k/%04d", i), []byte("v"), true))
	}
	kvs, err := b.ListPrefix(ctx, "cilium/state/k/")
	must(t, err)
	perLease := map[int64]int{}
	for _, v := range kvs {
		perLease[v.LeaseID]++
	}
	if len(perLease) != 2 {
		t.Fatalf("1001 keys are bound to %d leases (%v), want 2", len(perLease), perLease)
	}
	for id, n := range perLease {
		if n > 1000 {
			t.Errorf("lease %x holds %d keys", id, n)
		}
	}
	waitStatus(t, b, "leases=2", func(st kvstore.Status) bool { return strings.Contains(st.Message, "leases=2,") })
}
