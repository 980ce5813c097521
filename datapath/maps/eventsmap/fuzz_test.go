package eventsmap_test

import (
	"testing"

	"github.com/apiary-net/apiary/datapath/maps/eventsmap"
)

// FuzzDecode feeds arbitrary ring-buffer records to Decode: it returns an
// event or an error, never panics, and a decoded family is 4, 6 or none.
func FuzzDecode(f *testing.F) {
	f.Add(make([]byte, eventsmap.RecordSize))
	rec := make([]byte, eventsmap.RecordSize)
	rec[0], rec[5] = 2, 4
	f.Add(rec)
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := eventsmap.Decode(b)
		if err != nil {
			return
		}
		if a := ev.Src.Addr(); a.IsValid() && !a.Is4() && !a.Is6() {
			t.Errorf("decoded address %v is neither IPv4 nor IPv6", a)
		}
		if ev.Src.Addr().Is4() != ev.Dst.Addr().Is4() {
			t.Errorf("source %v and destination %v of different families", ev.Src, ev.Dst)
		}
	})
}
