package main_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/apiary-net/apiary/kvstore/kvstoretest"
)

// webPolicy lets endpoints labelled app=client reach app=web on TCP port
// 80, and 192.0.2.0/24 reach it on ports 8080-8083.
const webPolicy = `apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata:
  name: web
spec:
  endpointSelector:
    matchLabels:
      app: web
  ingress:
  - fromEndpoints:
    - matchLabels:
        app: client
    toPorts:
    - ports:
      - port: "80"
        protocol: TCP
  - fromCIDR: [192.0.2.0/24]
    toPorts:
    - ports:
      - port: "8080"
        endPort: 8083
        protocol: TCP
`

// flags are the flags of both tests: a node, two endpoints, a policy
// directory.
func flags(policyDir string) []string {
	return []string{
		"--node-name=node-a", "--node-ip=192.0.2.10", "--policy-dir=" + policyDir,
		"--endpoint=app=web@10.0.1.5", "--endpoint=app=client@10.0.1.6",
	}
}

// startAndWaitForEndpoints waits for the endpoints' identities, initial
// map states and ipcache entries; it returns the identities of web and
// client.
func startAndWaitForEndpoints(t *testing.T, p *program) (web, client string) {
	t.Helper()
	m := p.waitFor(0,
		`^endpoint 1: identity (\d+) \(k8s:app=web,k8s:io.cilium.k8s.policy.cluster=default,k8s:io.kubernetes.pod.namespace=default\)$`,
		`^endpoint 2: identity (\d+) \(k8s:app=client,`,
		`^endpoint 1: \+ ingress identity any any allow$`,
		`^endpoint 1: \+ egress identity any any allow$`,
		`^ipcache: 10\.0\.1\.5/32 -> identity (\d+)$`,
		`^ipcache: 10\.0\.1\.6/32 -> identity (\d+)$`,
	)
	web, client = m[0][1], m[1][1]
	if m[4][1] != web || m[5][1] != client {
		t.Errorf("ipcache identities %s, %s; want the endpoints' %s, %s", m[4][1], m[5][1], web, client)
	}
	return web, client
}

// addAndRemovePolicy drops webPolicy into dir, waits for web's map state
// to follow, removes it and waits for the map state to return.
func addAndRemovePolicy(t *testing.T, p *program, dir, client string) {
	t.Helper()
	file := filepath.Join(dir, "web.yaml")
	since := p.mark()
	writeFile(t, file, webPolicy)
	cidr := p.waitFor(since,
		`^endpoint 1: - ingress identity any any allow$`,
		`^endpoint 1: \+ ingress identity `+client+` tcp/80 allow$`,
		`^endpoint 1: \+ ingress identity (\d+) tcp/8080-8083 allow$`, // 192.0.2.0/24's CIDR identity
	)[2][1]

	since = p.mark()
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	p.waitFor(since,
		`^endpoint 1: - ingress identity `+client+` tcp/80 allow$`,
		`^endpoint 1: - ingress identity `+cidr+` tcp/8080-8083 allow$`,
		`^endpoint 1: \+ ingress identity any any allow$`,
	)
}

// checkClientUntouched checks that the policy, which does not select
// app=client, never changed its map state.
func checkClientUntouched(t *testing.T, p *program, client string) {
	t.Helper()
	want := []string{
		"endpoint 2: identity " + client + " (k8s:app=client,k8s:io.cilium.k8s.policy.cluster=default,k8s:io.kubernetes.pod.namespace=default)",
		"endpoint 2: policy revision 1, 2 keys",
		"endpoint 2: + ingress identity any any allow",
		"endpoint 2: + egress identity any any allow",
		"endpoint 2: released identity " + client,
	}
	if got := p.linesOf("endpoint 2:"); !slices.Equal(got, want) {
		t.Errorf("endpoint 2 printed\n%q\nwant\n%q", got, want)
	}
}

func TestStandalone(t *testing.T) {
	bin := buildProgram(t)
	dir := t.TempDir()
	p := startProgram(t, bin, flags(dir)...)
	web, client := startAndWaitForEndpoints(t, p)
	addAndRemovePolicy(t, p, dir, client)
	p.stop()
	p.waitFor(0, `^endpoint 1: released identity `+web+`$`)
	checkClientUntouched(t, p, client)
}

// TestEtcd runs against a real etcd, where another node's pod appears:
// its identity and ipcache entry, written to etcd, reach the ipcache
// listener and, through the identity observer, web's map state.
func TestEtcd(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	bin := buildProgram(t)
	dir := t.TempDir()
	p := startProgram(t, bin, append(flags(dir), "--kvstore=etcd", "--kvstore-opt=etcd.address="+srv.Endpoint())...)
	web, client := startAndWaitForEndpoints(t, p)
	waitForKey(t, srv, "cilium/state/ip/v1/default/10.0.1.5", true)
	addAndRemovePolicy(t, p, dir, client)

	since := p.mark()
	writeFile(t, filepath.Join(dir, "web.yaml"), webPolicy)
	p.waitFor(since, `^endpoint 1: \+ ingress identity `+client+` tcp/80 allow$`)
	since = p.mark()
	// A client pod with one more label on node-b: a new identity.
	put(t, srv, "cilium/state/identities/v1/id/60000",
		"k8s:app=client;k8s:io.cilium.k8s.policy.cluster=default;k8s:io.kubernetes.pod.namespace=default;k8s:version=v2;")
	put(t, srv, "cilium/state/ip/v1/default/10.0.2.7", `{"IP":"10.0.2.7","Mask":null,"HostIP":"192.0.2.20","ID":60000,"Key":0,"Metadata":""}`)
	p.waitFor(since,
		`^endpoint 1: \+ ingress identity 60000 tcp/80 allow$`,
		`^ipcache: 10\.0\.2\.7/32 -> identity 60000 via 192\.0\.2\.20$`,
	)
	since = p.mark()
	del(t, srv, "cilium/state/ip/v1/default/10.0.2.7")
	del(t, srv, "cilium/state/identities/v1/id/60000")
	p.waitFor(since,
		`^endpoint 1: - ingress identity 60000 tcp/80 allow$`,
		`^ipcache: 10\.0\.2\.7/32 deleted$`,
	)

	p.stop()
	p.waitFor(0, `^endpoint 1: released identity `+web+`$`)
	checkClientUntouched(t, p, client)
	waitForKey(t, srv, "cilium/state/ip/v1/default/10.0.1.5", false)
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func put(t *testing.T, srv *kvstoretest.Server, key, value string) {
	t.Helper()
	if _, err := srv.Client().Put(t.Context(), key, value); err != nil {
		t.Fatal(err)
	}
}

func del(t *testing.T, srv *kvstoretest.Server, key string) {
	t.Helper()
	if _, err := srv.Client().Delete(t.Context(), key); err != nil {
		t.Fatal(err)
	}
}

// waitForKey polls etcd (bounded) until key exists or not.
func waitForKey(t *testing.T, srv *kvstoretest.Server, key string, exists bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		resp, err := srv.Client().Get(t.Context(), key)
		if err != nil {
			t.Fatal(err)
		}
		if (len(resp.Kvs) > 0) == exists {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("key %s exists=%v, want %v within %s", key, !exists, exists, waitTimeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// echoServices is an --lb-state-file: one Service with one ready and
// one terminating endpoint.
const echoServices = `services:
- metadata: {name: echo, namespace: test}
  spec:
    clusterIP: 10.96.0.20
    ports: [{name: http, port: 80}]
endpoints:
- metadata: {name: echo-1, namespace: test, labels: {kubernetes.io/service-name: echo}}
  addressType: IPv4
  ports: [{name: http, port: 8080}]
  endpoints:
  - addresses: [10.0.1.5]
  - addresses: [10.0.1.7]
    conditions: {ready: false, serving: true, terminating: true}
`

// TestServices: the services of --lb-state-file reach the program's
// datapath through the service manager, and a changed file rewrites the
// frontend.
func TestServices(t *testing.T) {
	bin := buildProgram(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "services.yaml")
	writeFile(t, file, echoServices)
	p := startProgram(t, bin, "--node-name=node-a", "--node-ip=192.0.2.10", "--lb-state-file="+file)
	p.waitFor(0, `^service: 10\.96\.0\.20:80/TCP ClusterIP \(test/echo\) -> \[10\.0\.1\.5:8080/TCP, 10\.0\.1\.7:8080/TCP \(terminating\)\]$`)
	since := p.mark()
	writeFile(t, file, "")
	p.waitFor(since, `^service: 10\.96\.0\.20:80/TCP deleted$`)
	p.stop()
}
