package eventsmap_test

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/apiary-net/apiary/bpf"
	"github.com/apiary-net/apiary/datapath/maps/eventsmap"
	"github.com/apiary-net/apiary/policy"
)

func TestLayoutMatchesPrograms(t *testing.T) {
	if a, b := binary.Size(eventsmap.Record{}), binary.Size(bpf.LxcEvent{}); a != b || a != eventsmap.RecordSize {
		t.Errorf("Record is %d bytes, struct event %d, RecordSize %d", a, b, eventsmap.RecordSize)
	}
}

func TestDecode(t *testing.T) {
	r := eventsmap.Record{
		Type: 1, Reason: 181, Direction: 1, Family: 6, Proto: 6, EndpointID: 7,
		Sport: be(40000), Dport: be(80), SrcIdentity: 1000, DstIdentity: 2,
		Saddr: netip.MustParseAddr("fd00::7").As16(), Daddr: netip.MustParseAddr("2001:db8::1").As16(),
	}
	b, err := binary.Append(nil, binary.NativeEndian, r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := eventsmap.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	want := eventsmap.Event{
		Type: eventsmap.TypeDrop, Reason: eventsmap.ReasonPolicyDenied, Direction: policy.Egress, EndpointID: 7,
		SrcIdentity: 1000, DstIdentity: 2, Proto: policy.ProtoTCP,
		Src: netip.MustParseAddrPort("[fd00::7]:40000"), Dst: netip.MustParseAddrPort("[2001:db8::1]:80"),
	}
	if got != want {
		t.Errorf("Decode = %+v\nwant %+v", got, want)
	}
	if _, err := eventsmap.Decode(b[:10]); err == nil {
		t.Error("Decode of a short record succeeded")
	}
	// A record of the programs before the rev-NAT fields (60 bytes), as
	// those an upgrade has not reloaded yet write it: the same event, no
	// service.
	if got, err := eventsmap.Decode(b[:60]); err != nil || got != want {
		t.Errorf("Decode of an earlier program's record = %+v, %v\nwant %+v", got, err, want)
	}
	if _, err := eventsmap.Decode(b[:62]); err == nil {
		t.Error("Decode of a 62-byte record succeeded")
	}
	r.Family = 5
	b, _ = binary.Append(nil, binary.NativeEndian, r)
	if _, err := eventsmap.Decode(b); err == nil {
		t.Error("Decode of family 5 succeeded")
	}
}

func be(p uint16) uint16 {
	var b [2]byte
	binary.BigEndian.PutUint16(b[:], p)
	return binary.NativeEndian.Uint16(b[:])
}
