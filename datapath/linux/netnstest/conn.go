package netnstest

import (
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
)

// Echo listens on TCP port of ip inside the namespace at path and
// echoes what each connection sends until stop is called; stop
// closes the listener and the connections and waits for their
// goroutines.
func Echo(path string, ip netip.Addr, port int) (stop func(), err error) {
	var l net.Listener
	err = netnsutil.RunPath(path, func() error {
		var err error
		l, err = net.Listen("tcp", net.JoinHostPort(ip.String(), strconv.Itoa(port)))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listen on %s:%d: %w", ip, port, err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			})
		}
	})
	return func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	}, nil
}

// Dial connects from the namespace at path to ip:port over TCP, sends a
// line and checks it comes back.
func Dial(path string, ip netip.Addr, port int, timeout time.Duration) error {
	return DialFrom(path, netip.Addr{}, ip, port, timeout)
}

// DialFrom is Dial from the source address src (any when invalid).
func DialFrom(path string, src, ip netip.Addr, port int, timeout time.Duration) error {
	var c net.Conn
	err := netnsutil.RunPath(path, func() error {
		d := net.Dialer{Timeout: timeout}
		if src.IsValid() {
			d.LocalAddr = &net.TCPAddr{IP: src.AsSlice()}
		}
		var err error
		c, err = d.Dial("tcp", net.JoinHostPort(ip.String(), strconv.Itoa(port)))
		return err
	})
	if err != nil {
		return fmt.Errorf("dial %s:%d from %s: %w", ip, port, path, err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	msg := "hello from " + path + "\n"
	if _, err := io.WriteString(c, msg); err != nil {
		return fmt.Errorf("write to %s:%d: %w", ip, port, err)
	}
	buf := make([]byte, len(msg))
	if _, err := io.ReadFull(c, buf); err != nil {
		return fmt.Errorf("read echo from %s:%d: %w", ip, port, err)
	}
	if string(buf) != msg {
		return fmt.Errorf("echo from %s:%d: got %q, want %q", ip, port, buf, msg)
	}
	return nil
}
