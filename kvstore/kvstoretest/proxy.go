package kvstoretest

import (
	"io"
	"net"
	"sync"
)

// proxy forwards TCP connections to the etcd server. Clients connect
// through it, so a test can cut every connection at once (a partition),
// and stopping etcd does not wait for clients' streams to drain.
type proxy struct {
	ln     net.Listener
	target string

	mu       sync.Mutex
	paused   bool
	dropping bool                  // while paused: hold new connections silently
	conns    map[net.Conn]struct{} // every open connection
	held     map[net.Conn]struct{} // connections accepted while dropping
	wg       sync.WaitGroup
}

func newProxy(target string) (*proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}, held: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.paused && p.dropping {
			p.conns[c] = struct{}{}
			p.held[c] = struct{}{}
			p.wg.Add(1)
			p.mu.Unlock()
			go p.hold(c)
			continue
		}
		if p.paused {
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		p.conns[c] = struct{}{}
		p.wg.Add(1)
		p.mu.Unlock()
		go p.serve(c)
	}
}

func (p *proxy) serve(c net.Conn) {
	defer p.wg.Done()
	defer p.forget(c)
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	p.mu.Lock()
	if p.paused {
		p.mu.Unlock()
		_ = up.Close()
		return
	}
	p.conns[up] = struct{}{}
	p.mu.Unlock()
	defer p.forget(up)
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
	_ = c.Close()
	_ = up.Close()
	<-done
}

// hold reads and drops what a client sends, answering nothing, until
// the connection is cut.
func (p *proxy) hold(c net.Conn) {
	defer p.wg.Done()
	defer p.forget(c)
	_, _ = io.Copy(io.Discard, c)
}

func (p *proxy) forget(c net.Conn) {
	_ = c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.held, c)
	p.mu.Unlock()
}

// pause cuts every connection and refuses new ones until resume.
func (p *proxy) pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.paused, p.dropping = true, false
	for c := range p.conns {
		_ = c.Close()
	}
}

// drop cuts every connection, then accepts new ones but answers nothing
// on them until resume, as when a firewall drops the packets.
func (p *proxy) drop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.paused, p.dropping = true, true
	for c := range p.conns {
		_ = c.Close()
	}
}

// resume forwards new connections again and cuts the held ones, so that
// their clients reconnect.
func (p *proxy) resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.paused, p.dropping = false, false
	for c := range p.held {
		_ = c.Close()
	}
}

func (p *proxy) close() {
	_ = p.ln.Close()
	p.pause()
	p.wg.Wait()
}
