package policydiff

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cilium/cilium/pkg/k8s"
	ciliumtypes "github.com/cilium/cilium/pkg/types"

	"github.com/apiary-net/apiary/policy/policyapi"
)

// TestNamedPortsLabelsAreCiliums compares apiary's generated named-ports
// identity labels with Cilium v1.20's own (k8s.NamedPortsIdentityLabels)
// on generated pods' ports: few and many (split over several labels),
// short and long names, TCP, UDP and SCTP, and protocols left empty.
func TestNamedPortsLabelsAreCiliums(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	protos := []string{"", "TCP", "UDP", "SCTP", "tcp"}
	for i := range 500 {
		n := r.IntN(12)
		var ports []policyapi.NamedPort
		cports := ciliumtypes.NamedPortMap{}
		for j := range n {
			name := fmt.Sprintf("p%d%s", j, "abcdefghij"[:r.IntN(10)])
			port := uint16(1 + r.IntN(65535))
			proto := protos[r.IntN(len(protos))]
			ports = append(ports, policyapi.NamedPort{Name: name, Port: port, Protocol: policyapi.Protocol(proto)})
			if err := cports.AddPort(name, int(port), proto); err != nil {
				t.Fatal(err)
			}
		}
		want := k8s.NamedPortsIdentityLabels(cports)
		got := policyapi.NamedPortsIdentityLabels(ports)
		if len(got) != len(want) {
			t.Fatalf("pod %d: %d labels %v, Cilium %d %v", i, len(got), got, len(want), want)
		}
		for _, w := range want {
			l, ok := got.Get(w.Key)
			if !ok || l.Source != w.Source || l.Value != w.Value {
				t.Fatalf("pod %d: label %s=%q from %s, Cilium %s:%s=%q", i, l.Key, l.Value, l.Source, w.Source, w.Key, w.Value)
			}
		}
	}
}
