package ipcache

import (
	"testing"
	"unsafe"

	"github.com/apiary-net/apiary/policy/policyapi"
)

// TestInternerSharesEqualValues: equal namespaces and named-port sets
// come back as one copy; different ones stay apart.
func TestInternerSharesEqualValues(t *testing.T) {
	in := NewInterner()
	a := []policyapi.NamedPort{{Name: "http", Port: 80, Protocol: "TCP"}}
	b := []policyapi.NamedPort{{Name: "http", Port: 80, Protocol: "TCP"}}
	c := []policyapi.NamedPort{{Name: "http", Port: 8080, Protocol: "TCP"}}
	if got := in.NamedPorts(a); &got[0] != &a[0] {
		t.Error("the first set is not kept as given")
	}
	if got := in.NamedPorts(b); &got[0] != &a[0] {
		t.Error("an equal set is not shared")
	}
	if got := in.NamedPorts(c); &got[0] != &c[0] {
		t.Error("a different set is shared")
	}
	if got := in.NamedPorts(nil); got != nil {
		t.Errorf("namedPorts(nil) = %v, want nil", got)
	}
	ns := string([]byte("default"))
	in.String(ns)
	if got := in.String(string([]byte("default"))); unsafe.StringData(got) != unsafe.StringData(ns) {
		t.Errorf("string(%q) is not the interned copy", got)
	}
}
