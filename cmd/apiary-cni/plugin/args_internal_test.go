package plugin

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

func TestParseArgs(t *testing.T) {
	tests := []struct {
		name    string
		give    string
		want    cniArgs
		wantErr string
	}{
		{name: "empty"},
		{name: "kubernetes", give: "IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=web-0;K8S_POD_INFRA_CONTAINER_ID=abc",
			want: cniArgs{podNamespace: "default", podName: "web-0"}},
		{name: "labels with '=' in the value", give: "APIARY_LABELS=app=web,tier=db",
			want: cniArgs{labels: []string{"app=web", "tier=db"}}},
		{name: "no '='", give: "K8S_POD_NAME", wantErr: `CNI_ARGS: "K8S_POD_NAME" is not KEY=VALUE`},
		{name: "empty labels", give: "APIARY_LABELS=", wantErr: "CNI_ARGS APIARY_LABELS: no label"},
		{name: "bad label", give: "APIARY_LABELS=app=web,=x", wantErr: "CNI_ARGS APIARY_LABELS"},
		{name: "label of the agent's sources", give: "APIARY_LABELS=app=web,cidr:10.0.0.0/8", wantErr: `CNI_ARGS APIARY_LABELS: label cidr:10.0.0.0/8: source "cidr" belongs to the agent`},
		{name: "reserved in another case", give: "APIARY_LABELS=RESERVED:world", wantErr: `source "reserved" belongs to the agent`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseArgs(tt.give)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got.podNamespace != tt.want.podNamespace || got.podName != tt.want.podName || !slices.Equal(got.labels, tt.want.labels) {
				t.Fatalf("parseArgs(%q) = %+v, %v; want %+v", tt.give, got, err, tt.want)
			}
		})
	}
}

func TestEndpointLabels(t *testing.T) {
	tests := []struct {
		name    string
		conf    []string
		args    cniArgs
		want    []string
		wantErr string
	}{
		{name: "network and CNI_ARGS", conf: []string{"env=prod"}, args: cniArgs{labels: []string{"app=web"}}, want: []string{"env=prod", "app=web"}},
		{name: "pod namespace", args: cniArgs{podNamespace: "ns1"}, want: []string{"io.kubernetes.pod.namespace=ns1"}},
		{name: "namespace label given", args: cniArgs{podNamespace: "ns1", labels: []string{"k8s:io.kubernetes.pod.namespace=x"}},
			want: []string{"k8s:io.kubernetes.pod.namespace=x"}},
		{name: "none", wantErr: "no labels for the endpoint: outside Kubernetes set APIARY_LABELS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := endpointLabels(&NetConf{labels: tt.conf}, tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("endpointLabels = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name    string
		give    string
		wantErr []string
	}{
		{name: "defaults", give: `{"cniVersion":"1.1.0","name":"n","type":"apiary-cni"}`},
		{name: "wrong type", give: `{"name":"n","type":"bridge"}`, wantErr: []string{`field type: "bridge" is not "apiary-cni"`}},
		{name: "conventions' args.cni.labels", give: `{"name":"n","type":"apiary-cni","labels":["env=prod"],"args":{"cni":{"labels":[{"key":"app","value":"web"},{"key":"tier","value":"front"}]}}}`},
		{name: "bad labels name their field", give: `{"name":"n","type":"apiary-cni","labels":["env=prod","=x"],"args":{"cni":{"labels":[{"key":"app","value":"web"},{"key":"","value":"x"}]}}}`,
			wantErr: []string{"field labels[1]", `field args.cni.labels[1]: label "=x": empty key`}},
		{name: "agent's sources in the configuration", give: `{"name":"n","type":"apiary-cni","labels":["fqdn:example.com"],"args":{"cni":{"labels":[{"key":"cidr:0.0.0.0/0","value":""}]}}}`,
			wantErr: []string{`field labels[0]: label fqdn:example.com: source "fqdn"`, `field args.cni.labels[0]: label cidr:0.0.0.0/0: source "cidr"`}},
		{name: "every bad field", give: `{"name":"n","type":"apiary-cni","socket-path":"a.sock","log-file":"x.log","log-level":"loud","timeout":"-1s"}`,
			wantErr: []string{"field socket-path", "field log-file", "field log-level", "field timeout"}},
		{name: "not JSON", give: `{`, wantErr: []string{"decode network configuration"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conf, err := parseConfig([]byte(tt.give))
			if len(tt.wantErr) == 0 {
				if err != nil || conf.SocketPath != "/var/run/apiary/apiary.sock" || conf.timeout != defaultTimeout {
					t.Fatalf("parseConfig = %+v, %v; want the defaults", conf, err)
				}
				return
			}
			for _, w := range tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("error %v does not say %q", err, w)
				}
			}
		})
	}
}

// TestConventionLabels: the network's labels come first, then the CNI
// conventions' args.cni.labels, then APIARY_LABELS.
func TestConventionLabels(t *testing.T) {
	conf, err := parseConfig([]byte(`{"name":"n","type":"apiary-cni","labels":["env=prod"],` +
		`"args":{"cni":{"labels":[{"key":"app","value":"web"},{"key":"app.kubernetes.io/name","value":"front"}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := endpointLabels(conf, cniArgs{labels: []string{"tier=a"}})
	want := []string{"env=prod", "app=web", "app.kubernetes.io/name=front", "tier=a"}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("endpointLabels = %v, %v; want %v", got, err, want)
	}
}

func TestCandidateIDs(t *testing.T) {
	a, b := preferredID("c0ffee", "eth0"), preferredID("c0ffee", "net1")
	if a == 0 || a != preferredID("c0ffee", "eth0") || a == b {
		t.Fatalf("preferred ids %d %d: want stable, non-zero, per interface", a, b)
	}
	got := candidateIDs(65534, map[uint16]bool{65535: true, 1: true}, 3)
	if !slices.Equal(got, []uint16{65534, 2, 3}) {
		t.Fatalf("candidates from 65534 = %v, want [65534 2 3] (wrapping, skipping used)", got)
	}
}

// TestOpenLogFileRefusesAPipe: a log-file naming a named pipe (with or
// without a reader) is refused at once; a regular file opens.
func TestOpenLogFileRefusesAPipe(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "log")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if f, err := openLogFile(fifo); err == nil {
		f.Close()
		t.Fatal("a named pipe without a reader opened")
	}
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if f, err := openLogFile(fifo); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		if f != nil {
			f.Close()
		}
		t.Fatalf("a named pipe with a reader: %v, want a refusal", err)
	}
	f, err := openLogFile(filepath.Join(dir, "plugin.log"))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}
