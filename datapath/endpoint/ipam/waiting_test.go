package ipam_test

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/datapath/endpoint/ipam"
)

func TestWaitingForCIDRs(t *testing.T) {
	i := ipam.NewWaiting("spec.podCIDRs of node a")
	i.RestoreDone()
	select {
	case <-i.Ready():
		t.Fatal("Ready closed while waiting")
	default:
	}
	if v4, v6 := i.CIDRs(); v4.IsValid() || v6.IsValid() {
		t.Fatalf("CIDRs while waiting: %s %s", v4, v6)
	}
	_, _, err := i.Allocate("endpoint 1", true, false)
	if !errors.Is(err, ipam.ErrWaitingForCIDR) || !strings.Contains(err.Error(), "spec.podCIDRs of node a") {
		t.Fatalf("allocate while waiting: %v, want ErrWaitingForCIDR naming what it waits for", err)
	}
	// Restored endpoints' addresses are held: one inside the coming
	// CIDR, one outside it, one released again.
	for ip, owner := range map[string]string{"10.0.1.2": "endpoint 2", "10.9.9.9": "endpoint 3", "10.0.1.4": "endpoint 4"} {
		if err := i.AllocateIP(netip.MustParseAddr(ip), owner); err != nil {
			t.Fatal(err)
		}
	}
	if err := i.AllocateIP(netip.MustParseAddr("10.0.1.2"), "endpoint 5"); !errors.Is(err, ipam.ErrInUse) {
		t.Fatalf("holding an address twice: %v, want ErrInUse", err)
	}
	if err := i.Release(netip.MustParseAddr("10.0.1.4")); err != nil {
		t.Fatal(err)
	}
	if err := i.SetCIDRs(netip.MustParsePrefix("10.0.1.1/24"), netip.Prefix{}); err == nil || i.Waiting() == "" {
		t.Fatalf("a CIDR with host bits: %v, waiting %q; want an error and still waiting", err, i.Waiting())
	}
	err = i.SetCIDRs(netip.MustParsePrefix("10.0.1.0/29"), netip.Prefix{})
	if err == nil || !strings.Contains(err.Error(), "10.9.9.9") || !strings.Contains(err.Error(), "endpoint 3") {
		t.Fatalf("SetCIDRs = %v, want the held address outside the CIDR named", err)
	}
	if i.Waiting() != "" {
		t.Fatalf("still waiting for %q", i.Waiting())
	}
	select {
	case <-i.Ready():
	default:
		t.Fatal("Ready not closed after SetCIDRs")
	}
	var got []string
	for {
		v4, _, err := i.Allocate("new", true, false)
		if errors.Is(err, ipam.ErrFull) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v4.String())
	}
	// /29: .2 held by endpoint 2, .4 released: .3 .4 .5 .6 handed out.
	if strings.Join(got, ",") != "10.0.1.3,10.0.1.4,10.0.1.5,10.0.1.6" {
		t.Errorf("allocated %v", got)
	}
	if owner := i.Allocated()[netip.MustParseAddr("10.0.1.2")]; owner != "endpoint 2" {
		t.Errorf("10.0.1.2 owned by %q, want the restored endpoint 2", owner)
	}
	if err := i.SetCIDRs(netip.MustParsePrefix("10.0.2.0/24"), netip.Prefix{}); err == nil {
		t.Error("SetCIDRs twice succeeded")
	}
}
