package cell_test

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
)

type typesConfig struct {
	NodeIP      netip.Addr
	PodCIDR     netip.Prefix
	Ports       []int
	Weights     []float64
	Ratio       float64
	Count       int8
	Mask        uint16
	Interval    time.Duration
	KVStoreOpt  map[string]string
	Name        string
	TaggedField string `flag:"legacy-name"`
}

func (def typesConfig) Flags(fs *pflag.FlagSet) {
	fs.String("node-ip", "", "")
	fs.String("pod-cidr", "", "")
	fs.IntSlice("ports", nil, "")
	fs.Float64Slice("weights", nil, "")
	fs.Float64("ratio", 0.5, "")
	fs.Int8("count", 0, "")
	fs.Uint16("mask", 0, "")
	fs.Duration("interval", time.Second, "")
	fs.StringToString("kvstore-opt", nil, "")
	fs.String("name", "", "")
	fs.String("legacy-name", "", "")
}

func TestConfigFieldTypes(t *testing.T) {
	var got typesConfig
	celltest.New(t, []string{
		"node-ip=10.0.0.1", "pod-cidr=10.1.0.0/16", "ports=80,443", "weights=1.5,2",
		"count=-3", "mask=0x00ff", "interval=90s", "kvstore-opt=etcd.config=/a.yaml,etcd.qps=10",
		"name=n", "legacy-name=x",
	}, cell.Config(typesConfig{}), celltest.Capture(&got))

	want := typesConfig{
		NodeIP: netip.MustParseAddr("10.0.0.1"), PodCIDR: netip.MustParsePrefix("10.1.0.0/16"),
		Ports: []int{80, 443}, Weights: []float64{1.5, 2}, Ratio: 0.5, Count: -3, Mask: 255,
		Interval: 90 * time.Second, Name: "n", TaggedField: "x",
	}
	if got.NodeIP != want.NodeIP || got.PodCIDR != want.PodCIDR || len(got.Ports) != 2 || got.Ports[1] != 443 ||
		got.Weights[0] != 1.5 || got.Ratio != want.Ratio || got.Count != want.Count || got.Mask != want.Mask ||
		got.Interval != want.Interval || got.Name != "n" || got.TaggedField != "x" ||
		got.KVStoreOpt["etcd.config"] != "/a.yaml" || got.KVStoreOpt["etcd.qps"] != "10" {
		t.Errorf("decoded:\n%+v\nwant:\n%+v", got, want)
	}
}

func TestConfigBadTextValueNamesFlag(t *testing.T) {
	h := celltestHive(t, []string{"node-ip=10.0.0.300"}, cell.Config(typesConfig{}), cell.Invoke(func(typesConfig) {}))
	err := h.Populate()
	if err == nil || !strings.Contains(err.Error(), "flag --node-ip") {
		t.Errorf("Populate() = %v, want an error naming --node-ip", err)
	}
}
