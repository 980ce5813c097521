package netnstest

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
)

// EchoUDP listens on UDP port of ip inside the namespace at path and
// sends every datagram back to its sender until stop is called; stop
// closes the socket and waits for the goroutine.
func EchoUDP(path string, ip netip.Addr, port int) (stop func(), err error) {
	var c net.PacketConn
	err = netnsutil.RunPath(path, func() error {
		var err error
		c, err = net.ListenPacket("udp", net.JoinHostPort(ip.String(), strconv.Itoa(port)))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listen on udp %s:%d: %w", ip, port, err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := c.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = c.WriteTo(buf[:n], from)
		}
	})
	return func() {
		c.Close()
		wg.Wait()
	}, nil
}

// DialUDP sends a datagram from the namespace at path to ip:port and
// waits up to timeout for it to come back (an echo from EchoUDP).
func DialUDP(path string, ip netip.Addr, port int, timeout time.Duration) error {
	var c net.Conn
	err := netnsutil.RunPath(path, func() error {
		var err error
		c, err = net.Dial("udp", net.JoinHostPort(ip.String(), strconv.Itoa(port)))
		return err
	})
	if err != nil {
		return fmt.Errorf("dial udp %s:%d from %s: %w", ip, port, path, err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	msg := "hello over udp from " + path
	if _, err := c.Write([]byte(msg)); err != nil {
		return fmt.Errorf("send to udp %s:%d: %w", ip, port, err)
	}
	buf := make([]byte, 1500)
	n, err := c.Read(buf)
	if err != nil {
		return fmt.Errorf("read udp echo from %s:%d: %w", ip, port, err)
	}
	if string(buf[:n]) != msg {
		return fmt.Errorf("udp echo from %s:%d: got %q, want %q", ip, port, buf[:n], msg)
	}
	return nil
}
