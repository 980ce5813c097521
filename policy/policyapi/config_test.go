package policyapi_test

import (
	"testing"

	"github.com/spf13/pflag"

	"github.com/apiary-net/apiary/policy/policyapi"
)

func TestConfigFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		give []string
		want bool
	}{
		{"default is the local cluster", nil, true},
		{"turned off", []string{"--policy-default-local-cluster=false"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			policyapi.DefaultConfig.Flags(fs)
			if err := fs.Parse(tc.give); err != nil {
				t.Fatal(err)
			}
			got, err := fs.GetBool("policy-default-local-cluster")
			if err != nil || got != tc.want {
				t.Errorf("--policy-default-local-cluster = %v, %v; want %v", got, err, tc.want)
			}
			if o := policyapi.NewOptions("c1", policyapi.Config{PolicyDefaultLocalCluster: got}); o.DefaultLocalCluster != tc.want {
				t.Errorf("NewOptions: DefaultLocalCluster = %v", o.DefaultLocalCluster)
			}
		})
	}
}

func TestConfigLimits(t *testing.T) {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	policyapi.DefaultConfig.Flags(fs)
	if err := fs.Parse([]string{"--policy-max-document-size=1000", "--policy-max-input-size=2000"}); err != nil {
		t.Fatal(err)
	}
	doc, _ := fs.GetInt64("policy-max-document-size")
	in, _ := fs.GetInt64("policy-max-input-size")
	cfg := policyapi.Config{PolicyMaxDocumentSize: doc, PolicyMaxInputSize: in}
	if got := policyapi.NewOptions("c1", cfg).Limits; got != (policyapi.Limits{MaxDocumentSize: 1000, MaxInputSize: 2000}) {
		t.Errorf("NewOptions: Limits = %+v", got)
	}
	if l := policyapi.DefaultConfig.Limits(); l != policyapi.DefaultLimits() || l.MaxDocumentSize != 8<<20 || l.MaxInputSize != 16<<20 {
		t.Errorf("default limits = %+v, want 8 MiB and 16 MiB", l)
	}
	cfg.PolicyMaxInputSize = 0
	if err := cfg.Validate(); err == nil || err.Error() != "--policy-max-input-size: 0 is not positive" {
		t.Errorf("Validate = %v", err)
	}
}
