package sctpcrc_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/apiary-net/apiary/bpf/internal/sctpcrc"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checksum returns the CRC32c of an SCTP packet with its checksum field
// (bytes 8-11) taken as zero.
func checksum(pkt []byte) uint32 {
	c := append([]byte(nil), pkt...)
	clear(c[8:12])
	return crc32.Checksum(c, castagnoli)
}

// TestDelta rewrites each of the two ports of packets of many lengths
// (the 12-byte common header alone up to 65535 bytes) and checks that
// the checksum field, xored with Delta, is the CRC32c of the rewritten
// packet.
func TestDelta(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	lengths := []int{12, 13, 16, 28, 255, 256, 257, 1500, 4096 + 12, 9000, 65535}
	for range 40 {
		lengths = append(lengths, 12+rng.IntN(65535-12))
	}
	for _, n := range lengths {
		pkt := make([]byte, n)
		for i := range pkt {
			pkt[i] = byte(rng.Uint32())
		}
		binary.LittleEndian.PutUint32(pkt[8:], checksum(pkt))
		for _, off := range []int{0, 2} { // source, destination port
			old := binary.LittleEndian.Uint16(pkt[off:])
			port := uint16(rng.Uint32())
			binary.LittleEndian.PutUint16(pkt[off:], port)
			field := binary.LittleEndian.Uint32(pkt[8:]) ^ sctpcrc.Delta(old^port, n-off-2)
			if want := checksum(pkt); field != want {
				t.Fatalf("length %d, port at %d: field %#08x after the update, CRC32c %#08x", n, off, field, want)
			}
			binary.LittleEndian.PutUint32(pkt[8:], field)
		}
	}
}

// TestTables checks the tables against a zero-byte run's effect: a
// register followed by k zero bytes is the register times lo[k].
func TestTables(t *testing.T) {
	lo, hi := sctpcrc.Tables()
	if lo[0] != 1<<31 || hi[0] != 1<<31 {
		t.Fatalf("x^0 is %#x and %#x, want %#x", lo[0], hi[0], uint32(1)<<31)
	}
	// A zero byte shifts the reflected register by 8 steps.
	step := func(r uint32, bytes int) uint32 {
		for range 8 * bytes {
			r = r>>1 ^ sctpcrc.Poly&-(r&1)
		}
		return r
	}
	// lo[1] is x^8: the register 1<<31 (x^0) after one zero byte.
	if got := step(1<<31, 1); lo[1] != got {
		t.Fatalf("lo[1] = %#x, want %#x", lo[1], got)
	}
	if got := step(1<<31, 255); lo[255] != got {
		t.Fatalf("lo[255] = %#x, want %#x", lo[255], got)
	}
	if got := step(1<<31, 256); hi[1] != got {
		t.Fatalf("hi[1] = %#x, want %#x", hi[1], got)
	}
}

// TestHeaderCommitted checks that lib/sctp_crc.h is what gen writes.
func TestHeaderCommitted(t *testing.T) {
	got, err := os.ReadFile("../../lib/sctp_crc.h")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, sctpcrc.Header()) {
		t.Fatal("bpf/lib/sctp_crc.h differs from what bpf/internal/sctpcrc/gen writes: run `make bpf`")
	}
}
