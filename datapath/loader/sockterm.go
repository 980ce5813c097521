package loader

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/apiary-net/apiary/bpf"
	"github.com/apiary-net/apiary/datapath"
)

// TerminateSockets destroys the sockets of the calling thread's network
// namespace that the socket-level balancer connected to backend, a
// backend that left the load-balancing maps (bpf/sockterm.c): their
// applications get ECONNABORTED and connect again through the frontend.
// TCP backends' TCP sockets, UDP backends' UDP sockets; other protocols
// have none. It returns how many it destroyed. Run it in the node's
// namespace (that of the sockets the balancer serves).
func (l *Loader) TerminateSockets(backend datapath.L3n4Addr) (int, error) {
	progName := ""
	switch backend.Proto {
	case datapath.ProtoTCP:
		progName = "sock_term_tcp"
	case datapath.ProtoUDP:
		progName = "sock_term_udp"
	default:
		return 0, nil
	}
	spec, err := bpf.LoadSockTerm()
	if err != nil {
		return 0, fmt.Errorf("terminate sockets of %s: %w", backend, err)
	}
	repl, open := l.sharedReplacements(spec)
	if !open {
		return 0, errors.New("terminate sockets: loader not open")
	}
	coll, err := ebpf.NewCollectionWithOptions(spec, ebpf.CollectionOptions{MapReplacements: repl})
	if err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			return 0, fmt.Errorf("load socket terminator: %+v", ve)
		}
		return 0, fmt.Errorf("load socket terminator: %w", err)
	}
	defer coll.Close()
	if err := coll.Variables["term_filter"].Set(termFilter(backend)); err != nil {
		return 0, fmt.Errorf("terminate sockets of %s: %w", backend, err)
	}
	it, err := link.AttachIter(link.IterOptions{Program: coll.Programs[progName]})
	if err != nil {
		return 0, fmt.Errorf("terminate sockets of %s: %w", backend, err)
	}
	defer it.Close()
	rd, err := it.Open()
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
