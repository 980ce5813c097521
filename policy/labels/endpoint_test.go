package labels_test

import (
	"strings"
	"testing"

	"github.com/apiary-net/apiary/policy/labels"
)

func TestCheckEndpointLabels(t *testing.T) {
	tests := []struct {
		name    string
		give    []string
		cluster string
		wantErr []string // nil: accepted
	}{
		{name: "pod labels", give: []string{"app=web", "k8s:io.kubernetes.pod.namespace=default", "container:tier=db"}, cluster: "c1"},
		{name: "own cluster label", give: []string{"app=web", "k8s:io.cilium.k8s.policy.cluster=c1"}, cluster: "c1"},
		{name: "reserved", give: []string{"reserved:host"}, wantErr: []string{`label reserved:host: source "reserved"`}},
		{name: "cidr", give: []string{"app=a", "cidr:192.168.0.0/16"}, wantErr: []string{`label cidr:192.168.0.0/16: source "cidr"`}},
		{name: "fqdn", give: []string{"fqdn:example.com"}, wantErr: []string{`source "fqdn"`}},
		{name: "generated", give: []string{"gen:io.cilium.k8s.named-ports=http.TCP.80"}, wantErr: []string{`source "gen"`}},
		{name: "any case", give: []string{"RESERVED:world", "Cidr:0.0.0.0/0"}, wantErr: []string{"RESERVED:world", "Cidr:0.0.0.0/0"}},
		{name: "another cluster", give: []string{"k8s:io.cilium.k8s.policy.cluster=evil"}, cluster: "c1", wantErr: []string{`names cluster "evil", but this is cluster "c1"`}},
		{name: "cluster unchecked without a cluster", give: []string{"k8s:io.cilium.k8s.policy.cluster=evil"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ls, err := labels.ParseList(labels.SourceK8s, tt.give...)
			if err != nil {
				t.Fatal(err)
			}
			err = labels.CheckEndpointLabels(ls, tt.cluster)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
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
