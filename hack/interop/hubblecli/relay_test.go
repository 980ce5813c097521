package hubblecli_test

import (
	"context"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath/hubble/hubbletest"
	"github.com/apiary-net/apiary/datapath/monitor/monitortest"
)

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestRelay: Cilium's hubble-relay finds the agent through its Peer
// service on the unix socket, connects to its observer on
// --hubble-listen-address with mutual TLS (the server name the Peer
// service gives, the relay's client certificate checked), and the hubble
// CLI pointed at the relay lists the agent's flows with its node name.
func TestRelay(t *testing.T) {
	c := newCerts(t, "node-a.c1.hubble-grpc.cilium.io")
	listen := freePort(t)
	a := hubbletest.Start(t, "hubble-listen-address="+listen, "hubble-tls-cert-file="+c.serverCert,
		"hubble-tls-key-file="+c.serverKey, "hubble-tls-client-ca-files="+c.ca)
	s := a.NewScene(t)
	if v := s.Ingress(t, s.DeniedTCP()); v != monitortest.ActShot {
		t.Fatalf("denied flow: verdict %d", v)
	}
	relayAddr := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	relay := exec.CommandContext(ctx, relayBin, "serve", "--peer-service", "unix://"+a.Socket,
		"--listen-address", relayAddr, "--health-listen-address", freePort(t),
		"--disable-server-tls", "--tls-hubble-server-ca-files", c.ca,
		"--tls-hubble-client-cert-file", c.clientCert, "--tls-hubble-client-key-file", c.clientKey, "--retry-timeout", "1s")
	var relayLog strings.Builder
	relay.Stdout, relay.Stderr = &relayLog, &relayLog
	if err := relay.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		relay.Wait()
		if t.Failed() {
			t.Logf("hubble-relay:\n%s", relayLog.String())
		}
	}()
	var out string
	celltest.EventuallyWithin(t, "hubble observe through the relay lists the drop", 30*time.Second, func() bool {
		var err error
		out, err = hubbleAt(t, relayAddr, "observe", "-o", "json", "--last", "10")
		return err == nil && strings.Contains(out, `"drop_reason_desc":"POLICY_DENIED"`)
	})
	f := parseFlows(t, out)
	if len(f) != 1 || f[0].NodeName != "c1/node-a" || f[0].Flow.Source.PodName != hubbletest.ClientPod {
		t.Errorf("flows through the relay: %+v", f)
	}
	// The relay reports itself healthy once its peers are connected.
	var status string
	celltest.EventuallyWithin(t, "hubble status through the relay reports the node connected", 30*time.Second, func() bool {
		var err error
		status, err = hubbleAt(t, relayAddr, "status")
		return err == nil && strings.Contains(status, "Connected Nodes: 1/1")
	})
	t.Logf("hubble status through the relay:\n%s", status)

	// The listen address itself: mTLS, a client without a certificate is refused.
	tlsArgs := []string{"observe", "--tls", "--tls-ca-cert-files", c.ca, "--tls-server-name", "node-a.c1.hubble-grpc.cilium.io"}
	if out, err := hubbleAt(t, listen, tlsArgs...); err == nil {
		t.Errorf("hubble observe over TLS without a client certificate succeeded:\n%s", out)
	}
	withCert := append(tlsArgs, "--tls-client-cert-file", c.clientCert, "--tls-client-key-file", c.clientKey)
	if out, err := hubbleAt(t, listen, withCert...); err != nil || !strings.Contains(out, "Policy denied DROPPED") {
		t.Errorf("hubble observe over mTLS (%v):\n%s", err, out)
	}
}
