package tunnel_test

import (
	"strings"
	"testing"

	"github.com/apiary-net/apiary/datapath/tunnel"
)

func TestValidate(t *testing.T) {
	for _, tt := range []struct {
		name    string
		give    tunnel.Config
		wantErr string
	}{
		{name: "default", give: tunnel.DefaultConfig},
		{name: "zero is native", give: tunnel.Config{}},
		{name: "tunnel vxlan", give: tunnel.Config{RoutingMode: "tunnel", TunnelProtocol: "vxlan", TunnelPort: 8472}},
		{name: "geneve refused", give: tunnel.Config{RoutingMode: "tunnel", TunnelProtocol: "geneve", TunnelPort: 6081},
			wantErr: "--tunnel-protocol=geneve is not supported"},
		{name: "unknown protocol", give: tunnel.Config{RoutingMode: "tunnel", TunnelProtocol: "gre", TunnelPort: 1},
			wantErr: `--tunnel-protocol "gre"`},
		{name: "unknown mode", give: tunnel.Config{RoutingMode: "overlay"}, wantErr: `--routing-mode "overlay"`},
		{name: "bad port", give: tunnel.Config{RoutingMode: "tunnel", TunnelProtocol: "vxlan", TunnelPort: 70000},
			wantErr: "--tunnel-port: 70000"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.give.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestEndpointMTU(t *testing.T) {
	if got := (tunnel.Config{RoutingMode: tunnel.ModeTunnel}).EndpointMTU(); got != 1450 {
		t.Errorf("tunnel mode: endpoint MTU %d, want 1450", got)
	}
	if got := tunnel.DefaultConfig.EndpointMTU(); got != 0 {
		t.Errorf("native mode: endpoint MTU %d, want 0 (the default)", got)
	}
}
