package loadercell

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestDeviceFilter: names, prefixes and exclusions, the first match
// deciding; what --devices refuses.
func TestDeviceFilter(t *testing.T) {
	f := deviceFilter{"!eth9", "eth+", "bond0", "!ens+"}
	for _, tt := range []struct {
		name              string
		matched, excluded bool
	}{
		{"eth0", true, false}, {"eth9", true, true}, {"eth", true, false}, {"bond0", true, false}, {"bond1", false, false},
		{"ens5", true, true}, {"et", false, false},
	} {
		if m, x := f.match(tt.name); m != tt.matched || x != tt.excluded {
			t.Errorf("match(%s) = %v, %v; want %v, %v", tt.name, m, x, tt.matched, tt.excluded)
		}
	}
	if f.names() || !(deviceFilter{"eth0", "bond0"}).names() || (deviceFilter{}).names() {
		t.Error("names(): only a list of plain names lists names only")
	}
	for _, ok := range []deviceFilter{{"eth0"}, {"eth+", "!eth1"}, {"!docker+"}, {"enp0s31f6.100"}} {
		if err := ok.check(); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "+", "!", "!+", "eth/0", "eth 0", "eth0:1", "a!b", "e+th", "abcdefghijklmnop", "eth\t"} {
		err := deviceFilter{"eth0", bad}.check()
		if err == nil || !strings.Contains(err.Error(), "--devices[1]") {
			t.Errorf("%q: %v, want an error naming --devices[1]", bad, err)
		}
	}
}

// TestChooseDevices covers Cilium's detection rules and --devices'
// entries on one namespace's devices.
func TestChooseDevices(t *testing.T) {
	up := uint32(unix.IFF_UP)
	eth := func(index int, name, kind string) linkInfo {
		return linkInfo{index: index, name: name, kind: kind, flags: up, ether: true, addrs: 1, globalRoute: true}
	}
	links := []linkInfo{
		{index: 1, name: "lo", kind: "device", flags: up | unix.IFF_LOOPBACK, addrs: 2, globalRoute: true},
		eth(2, "ens5", "device"),
		eth(3, "eth1", "dummy"),
		eth(4, "lxc12", "veth"),
		eth(5, "cilium_vxlan", "vxlan"),
		eth(6, "br0", "bridge"),
		func() linkInfo { l := eth(7, "eth2", "device"); l.master = 6; return l }(),
		func() linkInfo { l := eth(8, "eth3", "device"); l.flags = 0; return l }(),
		func() linkInfo { l := eth(9, "eth4", "device"); l.addrs, l.globalRoute = 0, false; return l }(),
		func() linkInfo { l := eth(10, "eth5", "device"); l.globalRoute = false; return l }(),
		eth(11, "veth0", "veth"),
		func() linkInfo { l := eth(12, "veth1", "veth"); l.defaultRoute = true; return l }(),
		eth(13, "vrf-blue", "vrf"),
		func() linkInfo { l := eth(14, "eth6", "device"); l.master = 13; return l }(),
		func() linkInfo { l := eth(15, "wg0", "wireguard"); l.ether = false; return l }(),
		func() linkInfo { l := eth(16, "bond0", "bond"); return l }(),
		func() linkInfo { l := eth(17, "eth7", "device"); l.flags |= unix.IFF_SLAVE; return l }(),
		eth(18, "docker0", "bridge"),
		eth(19, "ib0", "ipoib"),
	}
	names := func(ds []netDevice) []string {
		var out []string
		for _, d := range ds {
			out = append(out, d.name)
		}
		return out
	}
	got, why := chooseDevices(links, nil, true)
	want := []string{"bond0", "ens5", "eth1", "eth6", "veth1", "vrf-blue"}
	if !slices.Equal(names(got), want) {
		t.Errorf("detected %v, want %v (not chosen: %v)", names(got), want, why)
	}
	if got[1] != (netDevice{"ens5", 2}) {
		t.Errorf("ens5 chosen as %+v, want its index", got[1])
	}
	for name, reason := range map[string]string{
		"lo": "named lo*", "lxc12": "named lxc*", "cilium_vxlan": "named cilium_*", "br0": "a bridge", "eth2": "a port of a bridge or bond",
		"eth3": "down", "eth4": "no address", "eth5": "no route to a global unicast address", "veth0": "a veth without a default route",
		"wg0": "no Ethernet address", "eth7": "a port of a bridge or bond", "docker0": "named docker*", "ib0": "an IPoIB device",
	} {
		if !strings.HasPrefix(why[name], reason) {
			t.Errorf("%s not chosen for %q, want %q", name, why[name], reason)
		}
	}
	if n := len(why) + len(got); n != len(links) {
		t.Errorf("%d devices accounted for, want %d: %v", n, len(links), slices.Sorted(maps.Keys(why)))
	}

	// --devices of names, as Cilium reads them: those that are up and
	// have an address, whatever they are, and no other device.
	got, why = chooseDevices(links, deviceFilter{"eth3", "br0"}, false)
	if !slices.Equal(names(got), []string{"br0"}) || why["eth3"] != "down" || why["ens5"] != "not matching --devices" {
		t.Errorf("--devices=eth3,br0 chose %v (not chosen: %v), want br0 only, eth3 down, the others not matching", names(got), why)
	}
	// Prefixes and exclusions: the matched devices that are up and have
	// an address, as they are (a bridge's port, one without a global
	// route); the first entry decides (eth7 is left out).
	got, why = chooseDevices(links, deviceFilter{"!ens5", "!eth7", "eth+"}, false)
	if want := []string{"eth1", "eth2", "eth5", "eth6"}; !slices.Equal(names(got), want) {
		t.Errorf("--devices=!ens5,!eth7,eth+ chose %v, want %v", names(got), want)
	}
	if why["ens5"] != "left out by --devices" || why["eth7"] != "left out by --devices" || why["eth4"] != "no address" ||
		why["bond0"] != "not matching --devices" {
		t.Errorf("reasons %v", why)
	}
	// With --enforce-device-detection the others are detected, a veth
	// without a default route too (the user filtered).
	got, _ = chooseDevices(links, deviceFilter{"!ens5", "!eth7", "eth+"}, true)
	if want := []string{"bond0", "eth1", "eth2", "eth5", "eth6", "veth0", "veth1", "vrf-blue"}; !slices.Equal(names(got), want) {
		t.Errorf("--devices=!ens5,!eth7,eth+ --enforce-device-detection chose %v, want %v", names(got), want)
	}
	got, _ = chooseDevices(links, deviceFilter{"eth3"}, true)
	if want := []string{"bond0", "ens5", "eth1", "eth6", "veth0", "veth1", "vrf-blue"}; !slices.Equal(names(got), want) {
		t.Errorf("--devices=eth3 --enforce-device-detection chose %v, want %v", names(got), want)
	}
	// Exclusions only: detection for the rest, as without --devices
	// (a veth needs its default route: nothing was named).
	got, why = chooseDevices(links, deviceFilter{"!ens5", "!eth6"}, false)
	if want := []string{"bond0", "eth1", "veth1", "vrf-blue"}; !slices.Equal(names(got), want) || why["eth6"] != "left out by --devices" {
		t.Errorf("--devices=!ens5,!eth6 chose %v (not chosen: %v), want %v", names(got), why, want)
	}
}
