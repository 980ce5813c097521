package tunnel

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/apiary-net/apiary/cells/cell"
)

// Cell provides the routing Config (flags --routing-mode,
// --tunnel-protocol, --tunnel-port) to the datapath cells.
var Cell = cell.Module("routing", "Routing between nodes: native or a VXLAN tunnel",
	cell.Config(DefaultConfig),
)

// Routing modes and tunnel protocols, as Cilium spells them.
const (
	ModeNative = "native"
	ModeTunnel = "tunnel"

	ProtocolVXLAN  = "vxlan"
	ProtocolGeneve = "geneve"
)

// DeviceName is the VXLAN device of tunnel mode (Cilium's is
// cilium_vxlan).
const DeviceName = "apiary_vxlan"

// DefaultPort is the VXLAN port, Cilium's (the Linux kernel's VXLAN
// port before IANA assigned 4789).
const DefaultPort = 8472

// Overhead is what VXLAN over an IPv4 underlay adds to a frame: outer
// IPv4 (20), UDP (8), VXLAN (8) and inner Ethernet (14) headers.
const Overhead = 50

// BaseMTU is the MTU of the underlay that endpoint MTUs are derived from.
const BaseMTU = 1500

// Config is the routing mode. The zero value (a hive without this cell)
// is native routing.
type Config struct {
	// RoutingMode is native (the network routes pod CIDRs; see
	// --auto-direct-node-routes) or tunnel (VXLAN between nodes).
	RoutingMode string
	// TunnelProtocol is the encapsulation of tunnel mode: vxlan.
	TunnelProtocol string
	// TunnelPort is the UDP port of the tunnel.
	TunnelPort int
}

// DefaultConfig is native routing. Cilium defaults to tunnel; apiary
// keeps native as the default so that a standalone agent needs no
// tunnel device, and the shipped Kubernetes ConfigMap sets tunnel.
var DefaultConfig = Config{RoutingMode: ModeNative, TunnelProtocol: ProtocolVXLAN, TunnelPort: DefaultPort}

// Flags registers --routing-mode, --tunnel-protocol and --tunnel-port.
func (def Config) Flags(fs *pflag.FlagSet) {
	fs.String("routing-mode", def.RoutingMode,
		"How packets reach pods on other nodes: native (the network routes pod CIDRs, see --auto-direct-node-routes) or tunnel (encapsulated to the node hosting the destination)")
	fs.String("tunnel-protocol", def.TunnelProtocol, "Encapsulation of --routing-mode=tunnel: vxlan")
	fs.Int("tunnel-port", def.TunnelPort, "UDP port of the tunnel")
}

// Validate checks the flags; geneve is refused with the reason.
func (c *Config) Validate() error {
	switch c.RoutingMode {
	case ModeNative, ModeTunnel, "":
	default:
		return fmt.Errorf("--routing-mode %q is not one of native, tunnel", c.RoutingMode)
	}
	switch c.TunnelProtocol {
	case ProtocolVXLAN, "":
	case ProtocolGeneve:
		return fmt.Errorf("--tunnel-protocol=geneve is not supported: apiary encapsulates with vxlan only " +
			"(the kernels it is tested on are built without CONFIG_GENEVE); use --tunnel-protocol=vxlan")
	default:
		return fmt.Errorf("--tunnel-protocol %q is not one of vxlan, geneve", c.TunnelProtocol)
	}
	if c.Enabled() && (c.TunnelPort < 1 || c.TunnelPort > 65535) {
		return fmt.Errorf("--tunnel-port: %d is not a UDP port (1..65535)", c.TunnelPort)
	}
	return nil
}

// Enabled reports whether the node routes to other nodes through the
// tunnel.
func (c Config) Enabled() bool { return c.RoutingMode == ModeTunnel }

// Port is the tunnel's UDP port (DefaultPort when unset).
func (c Config) Port() int {
	if c.TunnelPort == 0 {
		return DefaultPort
	}
	return c.TunnelPort
}

// EndpointMTU is the MTU of the endpoints' veths: BaseMTU less the
// tunnel's header in tunnel mode, so that an encapsulated packet fits the
// underlay; 0 (the veth default, BaseMTU) in native mode.
func (c Config) EndpointMTU() int {
	if c.Enabled() {
		return BaseMTU - Overhead
	}
	return 0
}
