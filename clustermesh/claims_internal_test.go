package clustermesh

import (
	"strings"
	"testing"
)

func TestIDClaims(t *testing.T) {
	c := newIDClaims()
	if err := c.Claim("cluster2", 2); err != nil {
		t.Fatal(err)
	}
	if err := c.Claim("cluster2", 2); err != nil {
		t.Errorf("claiming one's own id again = %v", err)
	}
	err := c.Claim("cluster3", 2)
	if err == nil || !strings.Contains(err.Error(), `cluster id 2 is already used by connected remote cluster "cluster2"`) {
		t.Errorf("duplicate claim = %v", err)
	}
	if got := strings.Join(c.Conflicts("cluster2"), ","); got != "cluster3" {
		t.Errorf("conflicts of cluster2 = %q, want cluster3", got)
	}
	if got := strings.Join(c.Conflicts("cluster3"), ","); got != "cluster2" {
		t.Errorf("conflicts of cluster3 = %q, want cluster2", got)
	}
	c.Release("cluster2")
	if err := c.Claim("cluster3", 2); err != nil {
		t.Errorf("claim after the holder released = %v", err)
	}
	if got := c.Conflicts("cluster2"); len(got) != 0 {
		t.Errorf("conflicts of a released cluster = %v", got)
	}
	if err := c.Claim("cluster3", 3); err != nil {
		t.Fatal(err)
	}
	if err := c.Claim("cluster4", 2); err != nil {
		t.Errorf("cluster3 moved to id 3, so id 2 is free: %v", err)
	}
}
