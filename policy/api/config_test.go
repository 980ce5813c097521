package api_test

import (
	"testing"

	"github.com/spf13/pflag"

	"github.com/apiary-net/apiary/policy/api"
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
			api.DefaultConfig.Flags(fs)
			if err := fs.Parse(tc.give); err != nil {
				t.Fatal(err)
			}
			got, err := fs.GetBool("policy-default-local-cluster")
			if err != nil || got != tc.want {
				t.Errorf("--policy-default-local-cluster = %v, %v; want %v", got, err, tc.want)
			}
			if o := api.NewOptions("c1", api.Config{PolicyDefaultLocalCluster: got}); o.DefaultLocalCluster != tc.want {
				t.Errorf("NewOptions: DefaultLocalCluster = %v", o.DefaultLocalCluster)
			}
		})
	}
}
