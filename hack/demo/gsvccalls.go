package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
)

// tally is what a round of calls got: answers per cluster, failures.
type tally struct {
	byCluster map[string]int
	failed    int
	firstErr  error
	sample    string
}

func (t tally) String() string {
	var parts []string
	for _, c := range slices.Sorted(maps.Keys(t.byCluster)) {
		parts = append(parts, fmt.Sprintf("%s %d", c, t.byCluster[c]))
	}
	if t.failed > 0 {
		parts = append(parts, fmt.Sprintf("failed %d (%v)", t.failed, t.firstErr))
	}
	return strings.Join(parts, ", ")
}

// calls makes n calls from the x-wing to the ClusterIP, each a new TCP
// connection (as `curl rebel-base` does), and counts the answers.
func (w *walkthrough) calls(n int) tally {
	t := tally{byCluster: map[string]int{}}
	for range n {
		cluster, body, err := w.call()
		if err != nil {
			t.failed++
			if t.firstErr == nil {
				t.firstErr = err
			}
			continue
		}
		t.byCluster[cluster]++
		if t.sample == "" {
			t.sample = body
		}
	}
	return t
}

// call makes one HTTP request from the x-wing's namespace to the
// ClusterIP and returns the answering cluster and the body.
func (w *walkthrough) call() (string, string, error) {
	addr := netip.AddrPortFrom(w.vips[w.local], gsvcPort)
	var c net.Conn
	err := netnsutil.RunPath(nsPath(w.xwing.ns()), func() error {
		var err error
		c, err = net.DialTimeout("tcp", addr.String(), gsvcTimeout)
		return err
	})
	if err != nil {
		return "", "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(gsvcTimeout))
	if _, err := fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: rebel-base\r\nUser-Agent: x-wing\r\nConnection: close\r\n\r\n"); err != nil {
		return "", "", err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return "", "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", "", err
	}
	var answer struct{ Galaxy, Cluster string }
	if err := json.Unmarshal(body, &answer); err != nil || answer.Cluster == "" {
		return "", "", fmt.Errorf("answer %q from %s is not rebel-base's", body, c.RemoteAddr())
	}
	return answer.Cluster, strings.TrimSpace(string(body)), nil
}

// check prints a step's tally and what it wants; it returns an error
// when the answers are not what the step wants: from exactly the given
// clusters, every call answered.
func (w *walkthrough) check(step string, t tally, want ...*cluster) error {
	var names []string
	for _, c := range want {
		names = append(names, c.name)
	}
	ok := t.failed == 0 && len(t.byCluster) == len(want)
	for _, c := range want {
		ok = ok && t.byCluster[c.name] > 0
	}
	verdict := "ok"
	if !ok {
		verdict = "WRONG"
	}
	wantText := strings.Join(names, " and ") + " only"
	if len(want) > 1 {
		wantText = "both clusters"
	}
	fmt.Fprintf(w.l.out, "  answers: %s; want %s: %s\n", t, wantText, verdict)
	if !ok {
		return fmt.Errorf("%s: answers %s, want %s", step, t, wantText)
	}
	return nil
}
