package healthserver_test

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/apiary-net/apiary/datapath/svcmanager/healthserver"
)

// TestProxy: /healthz and /livez answer kube-proxy's codes and body from
// the state: 503 before the services are written, 200 once they are,
// /healthz 503 (and /livez still 200) while the node is being deleted,
// lastUpdated the last healthy probe's time when unhealthy; an address
// in use is Failed's until it is free.
func TestProxy(t *testing.T) {
	var mu sync.Mutex
	st := healthserver.ProxyState{Reason: "waiting for the initial sync", NodeEligible: true}
	set := func(s healthserver.ProxyState) {
		mu.Lock()
		defer mu.Unlock()
		st = s
	}
	blocker, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := blocker.Addr().String()
	p := healthserver.NewProxy(slog.New(slog.DiscardHandler), addr, func() healthserver.ProxyState {
		mu.Lock()
		defer mu.Unlock()
		return st
	})
	defer p.Close()
	if err := p.Open(); err == nil || p.Failed() == nil {
		t.Fatalf("Open on an address in use = %v, Failed %v", err, p.Failed())
	}
	blocker.Close()
	if err := p.Open(); err != nil || p.Failed() != nil {
		t.Fatalf("Open once free = %v, Failed %v", err, p.Failed())
	}
	body := regexp.MustCompile(`^\{"lastUpdated": "([^"]+)","currentTime": "([^"]+)","nodeEligible": (true|false)\}\n$`)
	get := func(path string) (int, string, string, string) {
		t.Helper()
		c := http.Client{Timeout: 2 * time.Second}
		resp, err := c.Get(fmt.Sprintf("http://%s%s", addr, path))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		m := body.FindStringSubmatch(string(b))
		if m == nil || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: body %q, content type %q", path, b, resp.Header.Get("Content-Type"))
		}
		return resp.StatusCode, m[1], m[2], m[3]
	}
	parse := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse("2006-01-02 15:04:05.999999999 -0700 MST", s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if code, _, _, _ := get("/healthz"); code != http.StatusServiceUnavailable {
		t.Errorf("/healthz before the services are written: %d", code)
	}
	set(healthserver.ProxyState{Healthy: true, NodeEligible: true})
	code, last, now, eligible := get("/healthz")
	if code != http.StatusOK || last != now || eligible != "true" {
		t.Errorf("/healthz healthy: %d, lastUpdated %s, currentTime %s, nodeEligible %s", code, last, now, eligible)
	}
	healthyAt := parse(now)
	time.Sleep(10 * time.Millisecond)
	set(healthserver.ProxyState{Healthy: true})
	if code, _, _, eligible := get("/healthz"); code != http.StatusServiceUnavailable || eligible != "false" {
		t.Errorf("/healthz while the node is being deleted: %d, nodeEligible %s", code, eligible)
	}
	if code, _, _, _ := get("/livez"); code != http.StatusOK {
		t.Errorf("/livez while the node is being deleted: %d", code)
	}
	time.Sleep(10 * time.Millisecond)
	mark := time.Now()
	set(healthserver.ProxyState{Reason: "writes failing", NodeEligible: true})
	code, last, now, _ = get("/livez")
	if code != http.StatusServiceUnavailable || !parse(last).Before(mark) || parse(last).Before(healthyAt) || !parse(now).After(mark) {
		t.Errorf("/livez unhealthy: %d, lastUpdated %s (want the last healthy probe's, before %v), currentTime %s", code, last, mark, now)
	}
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(fmt.Sprintf("http://%s/other", addr))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("another path: %d", resp.StatusCode)
	}
}
