package netnstest

import (
	"io"
	"net"
	"net/netip"
	"testing"
	"time"
)

// Connect opens a TCP connection from the namespace at path to ip:port
// (closed at the test's end) and fails the test if it cannot.
func Connect(t testing.TB, path string, ip netip.Addr, port int) net.Conn {
	t.Helper()
	var c net.Conn
	Must(t, path, func() error {
		var err error
		c, err = net.DialTimeout("tcp", netip.AddrPortFrom(ip, uint16(port)).String(), 5*time.Second)
		return err
	})
	t.Cleanup(func() { c.Close() })
	return c
}

// RoundTrip sends msg on c, to an Echo server, and checks it comes back.
func RoundTrip(t testing.TB, c net.Conn, msg string) {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, msg); err != nil {
		t.Fatalf("write %q: %v", msg, err)
	}
	buf := make([]byte, len(msg))
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != msg {
		t.Fatalf("echo of %q: %q %v", msg, buf, err)
	}
}
