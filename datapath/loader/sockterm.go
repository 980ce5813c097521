package loader

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/apiary-net/apiary/bpf"
	"github.com/apiary-net/apiary/datapath"
)

// SockTerminator destroys the sockets the socket-level balancer connected
// to a backend that left the load-balancing maps (bpf/sockterm.c): their
// applications get ECONNABORTED and connect again through the frontend.
// TCP backends' TCP sockets, UDP backends' UDP sockets; other protocols
// have none. Not safe for concurrent use (one filter).
type SockTerminator struct {
	coll     *ebpf.Collection
	tcp, udp *link.Iter
}

// NewSockTerminator loads the terminator with the loader's shared maps.
func (l *Loader) NewSockTerminator() (*SockTerminator, error) {
	spec, err := bpf.LoadSockTerm()
	if err != nil {
		return nil, fmt.Errorf("load socket terminator: %w", err)
	}
	coll, err := l.newSharedCollection(spec, "load socket terminator")
	if err != nil {
		return nil, err
	}
	t := &SockTerminator{coll: coll}
	if t.tcp, err = link.AttachIter(link.IterOptions{Program: coll.Programs["sock_term_tcp"]}); err == nil {
		t.udp, err = link.AttachIter(link.IterOptions{Program: coll.Programs["sock_term_udp"]})
	}
	if err != nil {
		t.Close()
		return nil, fmt.Errorf("load socket terminator: %w", err)
	}
	return t, nil
}

// Terminate destroys the sockets of the calling thread's network
// namespace connected to backend through the socket-level balancer, and
// returns how many it destroyed.
func (t *SockTerminator) Terminate(backend datapath.L3n4Addr) (int, error) {
	var it *link.Iter
	switch backend.Proto {
	case datapath.ProtoTCP:
		it = t.tcp
	case datapath.ProtoUDP:
		it = t.udp
	default:
		return 0, nil
	}
	if err := t.coll.Variables["term_filter"].Set(termFilter(backend)); err != nil {
		return 0, fmt.Errorf("terminate sockets of %s: %w", backend, err)
	}
	rd, err := it.Open() // iterates the sockets of the thread's namespace
	if err != nil {
		return 0, fmt.Errorf("terminate sockets of %s: %w", backend, err)
	}
	defer rd.Close()
	cookies, err := io.ReadAll(rd) // the destroyed sockets' cookies, 8 bytes each
	if err != nil {
		return 0, fmt.Errorf("terminate sockets of %s: %w", backend, err)
	}
	return len(cookies) / 8, nil
}

// Close releases the programs.
func (t *SockTerminator) Close() {
	for _, it := range []*link.Iter{t.tcp, t.udp} {
		if it != nil {
			it.Close()
		}
	}
	t.coll.Close()
}

// termFilter is backend as the terminator's filter holds it: the
// address's bytes as the kernel keeps them (IPv4 in the first word), the
// port in network byte order.
func termFilter(backend datapath.L3n4Addr) bpf.SockTermSockTermFilter {
	f := bpf.SockTermSockTermFilter{Port: bits.ReverseBytes16(backend.Port), Family: 6}
	a := backend.Addr.Unmap()
	if a.Is4() {
		b := a.As4()
		f.Family, f.Address[0] = 4, binary.NativeEndian.Uint32(b[:])
		return f
	}
	b := a.As16()
	for i := range f.Address {
		f.Address[i] = binary.NativeEndian.Uint32(b[4*i:])
	}
	return f
}
