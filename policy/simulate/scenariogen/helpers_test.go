package scenariogen_test

import (
	"fmt"
	"testing"

	"go.yaml.in/yaml/v3"
)

// icmpTypeZero returns how many icmps fields of policy document doc
// name ICMP (IPv4) type 0.
func icmpTypeZero(t *testing.T, doc string) (n int) {
	t.Helper()
	var obj any
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		t.Fatalf("parse generated policy: %v\n%s", err, doc)
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			typ, ok := v["type"]
			family, _ := v["family"].(string)
			if ok && family != "IPv6" && (fmt.Sprint(typ) == "0" || typ == "EchoReply") {
				n++
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(obj)
	return n
}

// defaultDenyWithoutEntries returns how many directions of the rules of
// policy document doc have enableDefaultDeny true and no entries.
func defaultDenyWithoutEntries(t *testing.T, doc string) (n int) {
	t.Helper()
	var obj struct {
		Spec  map[string]any   `yaml:"spec"`
		Specs []map[string]any `yaml:"specs"`
	}
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		t.Fatalf("parse generated policy: %v\n%s", err, doc)
	}
	for _, rule := range append(obj.Specs, obj.Spec) {
		dd, _ := rule["enableDefaultDeny"].(map[string]any)
		for _, dir := range []string{"ingress", "egress"} {
			_, allow := rule[dir]
			_, deny := rule[dir+"Deny"]
			if on, _ := dd[dir].(bool); on && !allow && !deny {
				n++
			}
		}
	}
	return n
}
