package plugin

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/containernetworking/cni/pkg/types"

	"github.com/apiary-net/apiary/cells/api/client"
)

func TestCNIError(t *testing.T) {
	const socket = "/run/a.sock"
	tests := []struct {
		name     string
		give     error
		wantCode uint
		wantMsg  string
	}{
		{"unreachable", &client.UnreachableError{Socket: socket, Err: syscall.ECONNREFUSED}, types.ErrTryAgainLater,
			"ADD: cannot reach apiary-agent at /run/a.sock: is it running?"},
		{"no address now", &client.APIError{Method: "PUT", Path: "/v1/endpoint/3", StatusCode: 503, Message: "no pod CIDR"}, types.ErrTryAgainLater,
			"ADD: apiary-agent at /run/a.sock cannot serve it now: no pod CIDR"},
		{"refused", &client.APIError{Method: "PUT", Path: "/v1/endpoint/3", StatusCode: 400, Message: "field netns-path: empty"}, types.ErrInvalidNetworkConfig,
			"ADD: apiary-agent at /run/a.sock refused the endpoint: field netns-path: empty"},
		{"other", errors.New("boom"), types.ErrInternal, "ADD: boom"},
		{"already a CNI error", types.NewError(types.ErrInvalidNetNS, "netns", ""), types.ErrInvalidNetNS, "netns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var te *types.Error
			if !errors.As(cniError("ADD", socket, tt.give), &te) || te.Code != tt.wantCode || !strings.HasPrefix(te.Msg, tt.wantMsg) {
				t.Fatalf("cniError = %+v, want code %d and %q", te, tt.wantCode, tt.wantMsg)
			}
		})
	}
}
