package status

import (
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/api"
)

func TestAPIReportNamesSlowRequests(t *testing.T) {
	now := time.Now()
	r := apiReport("/run/apiary.sock", []api.Request{
		{Method: "PUT", Path: "/v1/endpoint/8", Since: now.Add(-41 * time.Second)},
		{Method: "GET", Path: "/v1/status", Since: now.Add(-time.Millisecond)},
	}, now)
	if r.State != Warning || !strings.Contains(r.Message, "2 requests in flight, 1 running for over 10s: PUT /v1/endpoint/8 (41s)") {
		t.Fatalf("report %+v, want a Warning naming the slow request", r)
	}
	if ok := apiReport("/run/apiary.sock", nil, now); ok.State != Ok || ok.Message != "/run/apiary.sock, 0 requests in flight" {
		t.Fatalf("report %+v, want Ok", ok)
	}
}
