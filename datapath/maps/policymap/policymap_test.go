package policymap_test

import (
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/apiary-net/apiary/bpf"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	"github.com/apiary-net/apiary/datapath/maps/policymap"
	"github.com/apiary-net/apiary/policy"
)

func TestLayoutMatchesPrograms(t *testing.T) {
	if a, b := binary.Size(policymap.Key{}), binary.Size(bpf.LxcPolicyKey{}); a != b {
		t.Errorf("Key is %d bytes, struct policy_key %d", a, b)
	}
	if a, b := binary.Size(policymap.Value{}), binary.Size(bpf.LxcPolicyValue{}); a != b {
		t.Errorf("Value is %d bytes, struct policy_value %d", a, b)
	}
}

func k(id uint32, dir policy.Direction, proto policy.Proto, port uint16, plen uint8) policy.Key {
	return policy.Key{Identity: identityOf(id), Direction: dir, Proto: proto, Port: port, PrefixLen: plen}
}

func TestTranslate(t *testing.T) {
	tests := []struct {
		name    string
		give    policy.MapState
		want    map[policy.Key]bool // key -> deny in the map
		wantErr bool
	}{
		{
			name: "allow keys covered by a deny become deny",
			give: policy.MapState{
				k(5, policy.Egress, policy.ProtoTCP, 0, 0):      {Deny: true},
				k(5, policy.Egress, policy.ProtoTCP, 80, 16):    {},
				k(5, policy.Egress, policy.ProtoUDP, 80, 16):    {},
				k(6, policy.Egress, policy.ProtoTCP, 80, 16):    {},
				k(0, policy.Ingress, policy.ProtoTCP, 8080, 13): {Deny: true},
				k(7, policy.Ingress, policy.ProtoTCP, 8081, 16): {},
				k(7, policy.Ingress, policy.ProtoTCP, 8090, 16): {},
			},
			want: map[policy.Key]bool{
				k(5, policy.Egress, policy.ProtoTCP, 0, 0):      true,
				k(5, policy.Egress, policy.ProtoTCP, 80, 16):    true,
				k(5, policy.Egress, policy.ProtoUDP, 80, 16):    false,
				k(6, policy.Egress, policy.ProtoTCP, 80, 16):    false,
				k(0, policy.Ingress, policy.ProtoTCP, 8080, 13): true,
				k(7, policy.Ingress, policy.ProtoTCP, 8081, 16): true,
				k(7, policy.Ingress, policy.ProtoTCP, 8090, 16): false,
			},
		},
		{
			name:    "a port without a protocol is refused",
			give:    policy.MapState{k(5, policy.Egress, policy.ProtoAny, 80, 16): {}},
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := policymap.Translate(tt.give)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Translate error %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if len(got) != len(tt.want) {
				t.Errorf("Translate gave %d entries, want %d", len(got), len(tt.want))
			}
			for mk, e := range got {
				if want, ok := tt.want[mk.PolicyKey()]; !ok || want != e.Deny {
					t.Errorf("entry %v deny=%v, want present=%v deny=%v", mk.PolicyKey(), e.Deny, ok, want)
				}
			}
		})
	}
}

func openMap(t *testing.T, max uint32) *policymap.Map {
	m, err := policymap.Open(slog.New(slog.NewTextHandler(io.Discard, nil)), bpfmaptest.Root(t), 9, max)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func TestSyncWritesOnlyTheDifference(t *testing.T) {
	m := openMap(t, 16)
	first := policy.MapState{
		k(5, policy.Egress, policy.ProtoTCP, 80, 16):  {},
		k(6, policy.Egress, 0, 0, 0):                  {},
		k(0, policy.Ingress, policy.ProtoUDP, 53, 16): {Deny: true},
	}
	steps := []struct {
		name             string
		give             policy.MapState
		wantAdd, wantDel int
	}{
		{"from empty", first, 3, 0},
		{"the same state again", first, 0, 0},
		{"one key changed, one removed, one added", policy.MapState{
			k(5, policy.Egress, policy.ProtoTCP, 80, 16):  {Deny: true},
			k(0, policy.Ingress, policy.ProtoUDP, 53, 16): {Deny: true},
			k(7, policy.Egress, policy.ProtoICMP, 8, 16):  {},
		}, 2, 1},
		{"to empty", policy.MapState{}, 0, 3},
	}
	for _, s := range steps {
		add, del, err := m.Sync(s.give)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if add != s.wantAdd || del != s.wantDel {
			t.Errorf("%s: Sync wrote %d, deleted %d; want %d, %d", s.name, add, del, s.wantAdd, s.wantDel)
		}
		got, err := m.Dump()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(s.give) {
			t.Errorf("%s: map holds %d entries, want %d", s.name, len(got), len(s.give))
		}
		for _, e := range got {
			if want, ok := s.give[e.Key]; !ok || want.Deny != e.Deny {
				t.Errorf("%s: map entry %v deny=%v not in the desired state", s.name, e.Key, e.Deny)
			}
		}
	}
}

func TestSyncRefusesAStateLargerThanTheMap(t *testing.T) {
	m := openMap(t, 2)
	if _, _, err := m.Sync(policy.MapState{k(5, policy.Egress, 0, 0, 0): {}}); err != nil {
		t.Fatal(err)
	}
	big := policy.MapState{
		k(1, policy.Egress, 0, 0, 0): {}, k(2, policy.Egress, 0, 0, 0): {}, k(3, policy.Egress, 0, 0, 0): {},
	}
	_, _, err := m.Sync(big)
	if !errors.Is(err, datapath.ErrPolicyMapFull) {
		t.Fatalf("Sync of 3 keys into a 2-entry map: %v, want ErrTooLarge", err)
	}
	got, _ := m.Dump()
	if len(got) != 1 || got[0].Key != k(5, policy.Egress, 0, 0, 0) {
		t.Errorf("map after the refused Sync = %+v, want the previous single entry", got)
	}
}
