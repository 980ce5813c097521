package loadercell

import (
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/linux"
	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
	"github.com/apiary-net/apiary/datapath/loader"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap"
	"github.com/apiary-net/apiary/datapath/maps/policymap"
	"github.com/apiary-net/apiary/policy"
)

// Cell provides the *loader.Loader, open between start and stop, and
// the control plane's datapath.Loader, datapath.PolicyMapWriter and
// datapath.IPCacheMapWriter and datapath.LBMapWriter backed by it
// (Datapath). It owns
// --bpf-policy-map-max, the size of the policy maps it creates, and
// provides it as the policy.MapStateLimit that trace reports against.
var Cell = cell.Module("bpf-loader", "BPF loader: endpoint programs, pinned maps and tcx links",
	cell.Config(DefaultConfig),
	cell.Provide(
		newLoader,
		newDatapath,
		func(d *Datapath) datapath.Loader { return d },
		func(d *Datapath) datapath.PolicyMapWriter { return d },
		func(d *Datapath) datapath.IPCacheMapWriter { return d },
		func(d *Datapath) datapath.LBMapWriter { return d },
		newDevices,
		newNodePortAddrs,
		newStatusProvider,
		func(c Config) policy.MapStateLimit { return policy.MapStateLimit(c.BPFPolicyMapMax) },
	),
)

// Config is the loader's configuration.
type Config struct {
	// BPFRoot is the bpffs directory maps and links are pinned under.
	BPFRoot string
	// BPFAttachMode is auto (tcx, else tc clsact), tcx or tc.
	BPFAttachMode string
	// BPFPolicyMapMax is the number of keys each endpoint's policy map
	// holds (Cilium's --bpf-policy-map-max); a map state with more keys
	// is refused for that endpoint.
	BPFPolicyMapMax int
	// BPFLBMapMax is the number of entries of each load-balancing map
	// (Cilium's --bpf-lb-map-max): service entries are a frontend's
	// backends + 1.
	BPFLBMapMax int
	// BPFLBSock attaches the socket-level load balancer to CgroupRoot
	// (Cilium's --bpf-lb-sock): processes there reach services at
	// connect/sendmsg time.
	BPFLBSock bool
	// KubeProxyReplacement is Cilium's umbrella switch: "true" (or
	// "strict") turns BPFLBSock and EnableNodePort on, whatever their
	// own flags say (effective); "false" (or "disabled", or "") leaves
	// them to their flags.
	KubeProxyReplacement string
	// BPFLBSockHostnsOnly limits the socket-level balancer to the
	// sockets of the node's network namespace (Cilium's
	// --bpf-lb-sock-hostns-only, for service meshes whose sidecars
	// must see the frontend): the pods' are balanced per packet.
	BPFLBSockHostnsOnly bool
	// NodePortBindProtection, with BPFLBSock, refuses a bind of the
	// node's sockets to a NodePort, ExternalIPs or LoadBalancer
	// frontend's address and port (Cilium's --node-port-bind-protection):
	// its traffic would be balanced away from them.
	NodePortBindProtection bool
	// CgroupRoot is the cgroup v2 the socket-level balancer attaches to.
	CgroupRoot string
	// EnableNodePort attaches the NodePort programs to Devices (Cilium's
	// --enable-node-port): NodePort, ExternalIPs and LoadBalancer
	// frontends are balanced for traffic from outside.
	EnableNodePort bool
	// Devices are the node's external devices (Cilium's --devices):
	// names, prefixes ("eth+") and either after "!" (left out). The
	// devices are read and followed (devices.go): those matched, or,
	// with exclusions only or empty, those detected.
	Devices []string
	// EnforceDeviceDetection detects the devices Devices does not match
	// too: those it matches and the detected ones (Cilium's
	// --enforce-device-detection).
	EnforceDeviceDetection bool
	// BPFLBExternalClusterIP balances ClusterIP frontends for traffic
	// from outside too (Cilium's --bpf-lb-external-clusterip).
	BPFLBExternalClusterIP bool
	// NodePortAddresses are CIDRs NodePort frontends are limited to
	// (Cilium's --nodeport-addresses): every address of Devices within
	// them, and the node's own within them; empty: the node's own and
	// each device's primary IPv4 and IPv6 address.
	NodePortAddresses []string
	// IPv4ServiceLoopbackAddress is the source of a pod's flows to itself
	// through a service (hairpin; Cilium's flag of that name); empty: no
	// hairpin translation.
	IPv4ServiceLoopbackAddress string
	// IPv6ServiceLoopbackAddress is IPv6's (apiary's flag in Cilium's
	// spelling: Cilium has no IPv6 hairpin translation).
	IPv6ServiceLoopbackAddress string
	// ServiceNoBackendResponse is what a packet to a service without
	// backends gets (Cilium's flag): "reject" (an ICMP port unreachable,
	// ECONNREFUSED at the socket, as kube-proxy; also "") or "drop".
	ServiceNoBackendResponse string
}

var attachModes = map[string]loader.AttachMode{"auto": loader.AttachAuto, "tcx": loader.AttachTCX, "tc": loader.AttachTC}

// DefaultConfig has the defaults of the flags; the policy map size is
// the map's own default (Cilium's).
var DefaultConfig = Config{BPFRoot: bpfmap.DefaultRoot, BPFAttachMode: "auto", BPFPolicyMapMax: policymap.DefaultMaxEntries,
	BPFLBMapMax: 65536, CgroupRoot: "/sys/fs/cgroup", NodePortBindProtection: true, IPv4ServiceLoopbackAddress: loader.DefaultServiceLoopback.String(),
	IPv6ServiceLoopbackAddress: loader.DefaultServiceLoopback6.String(), ServiceNoBackendResponse: "reject"}

// maxPolicyMapMax bounds --bpf-policy-map-max (the kernel's hash maps
// take more, but a policy map of millions of keys is a mistake).
const maxPolicyMapMax = 1 << 20

// maxLBMapMax bounds --bpf-lb-map-max.
const maxLBMapMax = 1 << 24

// Flags registers --kube-proxy-replacement, --bpf-root, --bpf-attach-mode, --bpf-policy-map-max,
// --bpf-lb-map-max, --bpf-lb-sock, --cgroup-root, --enable-node-port, --devices, --enforce-device-detection,
// --node-port-bind-protection, --bpf-lb-external-clusterip, --nodeport-addresses,
// --ipv4-service-loopback-address,
// --ipv6-service-loopback-address and --service-no-backend-response.
func (def Config) Flags(fs *pflag.FlagSet) {
	fs.String("bpf-root", def.BPFRoot, "Directory on a bpffs to pin BPF maps and links under (a bpffs is mounted there if it is not on one)")
	fs.String("bpf-attach-mode", def.BPFAttachMode, "How endpoint programs attach: auto (tcx on Linux >= 6.6, else tc clsact), tcx or tc")
	fs.Int("bpf-policy-map-max", def.BPFPolicyMapMax, "Maximum number of keys in an endpoint's policy map")
	fs.Int("bpf-lb-map-max", def.BPFLBMapMax, "Maximum number of entries of each load-balancing map (services: a frontend takes its backends + 1; backends; reverse NAT; affinity)")
	fs.Bool("bpf-lb-sock", def.BPFLBSock, "Translate services at the socket (cgroup connect/sendmsg hooks on --cgroup-root) for processes without endpoint programs, such as those of the host network namespace")
	fs.String("kube-proxy-replacement", def.KubeProxyReplacement, "true: replace kube-proxy (Cilium's switch): turns on --bpf-lb-sock and --enable-node-port; false: each part by its own flag")
	fs.Bool("bpf-lb-sock-hostns-only", def.BPFLBSockHostnsOnly, "With --bpf-lb-sock, translate only the sockets of the node's network namespace (--datapath-netns, else the agent's); the pods' are balanced per packet by their endpoint programs, where a service mesh's sidecar sees the frontend")
	fs.Bool("node-port-bind-protection", def.NodePortBindProtection, "With --bpf-lb-sock, refuse (EADDRINUSE) a bind of the node's sockets to the address and port of a NodePort, ExternalIPs or LoadBalancer frontend, whose traffic is balanced away from them")
	fs.String("cgroup-root", def.CgroupRoot, "Path of the cgroup v2 the socket-level load balancer attaches to")
	fs.Bool("enable-node-port", def.EnableNodePort, "Balance NodePort, ExternalIPs and LoadBalancer frontends for traffic arriving on the node's external devices (--devices, else detected)")
	fs.StringSlice("devices", def.Devices, "The node's external network devices, for NodePort (in --datapath-netns when set): names (eth0), prefixes (eth+) and either after ! to leave those out (the first match decides; a matched device must be up with an address; unmatched ones are left out); empty or exclusions only: detected (up, with a global unicast route, not a bridge, bridge port, loopback or lxc/cilium_/cni/docker device); followed as devices change")
	fs.Bool("enforce-device-detection", def.EnforceDeviceDetection, "Detect the external devices --devices does not match too (those it matches and the detected ones)")
	fs.Bool("bpf-lb-external-clusterip", def.BPFLBExternalClusterIP, "With --enable-node-port, balance ClusterIP frontends for traffic arriving on --devices too (a router sends the service CIDR to the nodes)")
	fs.StringSlice("nodeport-addresses", def.NodePortAddresses, "CIDRs to limit the addresses NodePorts are served on to (every address of the NodePort devices within them); empty: the node's addresses and each device's primary IPv4 and IPv6 address")
	fs.String("ipv4-service-loopback-address", def.IPv4ServiceLoopbackAddress, "Source address of a pod's connections to itself through a service (hairpin), as the pod sees them; empty: no hairpin translation")
	fs.String("service-no-backend-response", def.ServiceNoBackendResponse, "What a packet to a service without backends gets: reject (an ICMP port unreachable from the frontend, ECONNREFUSED at the socket, as kube-proxy's REJECT) or drop")
	fs.String("ipv6-service-loopback-address", def.IPv6ServiceLoopbackAddress, "IPv6 source address of a pod's connections to itself through an IPv6 service (hairpin), routed (not link-local); empty: no IPv6 hairpin translation")
}

// kprOn parses --kube-proxy-replacement.
func (c *Config) kprOn() (bool, error) {
	switch c.KubeProxyReplacement {
	case "true", "strict":
		return true, nil
	case "", "false", "disabled":
		return false, nil
	case "partial", "probe":
		return false, fmt.Errorf("--kube-proxy-replacement %q is not supported (Cilium removed it in 1.14): use true, or turn the parts on one by one (--bpf-lb-sock, --enable-node-port)", c.KubeProxyReplacement)
	}
	return false, fmt.Errorf("--kube-proxy-replacement %q is not true or false", c.KubeProxyReplacement)
}

// effective is c with --kube-proxy-replacement applied: with it on, the
// socket-level balancer and the NodePort programs.
func (c Config) effective() Config {
	if on, _ := c.kprOn(); on {
		c.BPFLBSock, c.EnableNodePort = true, true
	}
	return c
}

// Validate checks the flags.
func (c *Config) Validate() error {
	if _, err := c.kprOn(); err != nil {
		return err
	}
	if e := c.effective(); e.BPFLBSock && e.CgroupRoot == "" {
		return fmt.Errorf("--cgroup-root must not be empty with --bpf-lb-sock or --kube-proxy-replacement")
	}
	if c.BPFRoot == "" {
		return fmt.Errorf("--bpf-root must not be empty")
	}
	if _, ok := attachModes[c.BPFAttachMode]; !ok {
		return fmt.Errorf("--bpf-attach-mode %q is not one of auto, tcx, tc", c.BPFAttachMode)
	}
	if c.BPFLBMapMax < 1 || c.BPFLBMapMax > maxLBMapMax {
		return fmt.Errorf("--bpf-lb-map-max: %d is not between 1 and %d", c.BPFLBMapMax, maxLBMapMax)
	}
	if err := deviceFilter(c.Devices).check(); err != nil {
		return err
	}
	if _, _, err := c.serviceLoopback(); err != nil {
		return err
	}
	if _, err := c.nodePortCIDRs(); err != nil {
		return err
	}
	switch c.ServiceNoBackendResponse {
	case "", "reject", "drop": // "": reject, for a Config made in Go
	default:
		return fmt.Errorf("--service-no-backend-response %q is not reject or drop", c.ServiceNoBackendResponse)
	}
	if c.BPFPolicyMapMax < 1 || c.BPFPolicyMapMax > maxPolicyMapMax {
		return fmt.Errorf("--bpf-policy-map-max: %d is not between 1 and %d", c.BPFPolicyMapMax, maxPolicyMapMax)
	}
	return nil
}

// serviceLoopback parses --ipv4-service-loopback-address and
// --ipv6-service-loopback-address; empty turns the family's hairpin
// translation off (the invalid Addr).
func (c *Config) serviceLoopback() (v4, v6 netip.Addr, err error) {
	parse := func(flag, s string, check func(netip.Addr) error) (netip.Addr, error) {
		if s == "" {
			return netip.Addr{}, nil
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Addr{}, fmt.Errorf("--%s %q is not an IP address", flag, s)
		}
		return a, check(a)
	}
	if v4, err = parse("ipv4-service-loopback-address", c.IPv4ServiceLoopbackAddress, loader.CheckServiceLoopback); err != nil {
		return v4, v6, err
	}
	v6, err = parse("ipv6-service-loopback-address", c.IPv6ServiceLoopbackAddress, loader.CheckServiceLoopback6)
	return v4, v6, err
}

type loaderParams struct {
	cell.In

	Config    Config
	Linux     linux.Config `optional:"true"`
	Lifecycle cell.Lifecycle
	Log       *slog.Logger
}

func newLoader(p loaderParams) (*loader.Loader, error) {
	p.Config = p.Config.effective()
	loopback, loopback6, err := p.Config.serviceLoopback()
	if err != nil {
		return nil, &cell.ConfigError{Err: err}
	}
	l, err := loader.New(p.Log, p.Config.BPFRoot, uint32(p.Config.BPFPolicyMapMax), loader.WithAttachMode(attachModes[p.Config.BPFAttachMode]),
		loader.WithLBMapMax(uint32(p.Config.BPFLBMapMax)), loader.WithServiceLoopback(loopback), loader.WithServiceLoopback6(loopback6),
		loader.WithServiceNoBackendResponse(p.Config.ServiceNoBackendResponse != "drop"), loader.WithExternalClusterIP(p.Config.BPFLBExternalClusterIP))
	if err != nil {
		return nil, &cell.ConfigError{Err: err}
	}
	p.Lifecycle.Append(cell.Hook{
		OnStart: func(cell.HookContext) error {
			if err := l.Open(); err != nil {
				return err
			}
			if err := sockLB(p.Log, l, p.Config, p.Linux.DatapathNetNS); err != nil {
				l.Close()
				return err
			}
			return nil
		},
		OnStop: func(cell.HookContext) error { return l.Close() },
	})
	return l, nil
}

// subgroup reports whether cgroup v2 directory dir is not the root of its
// hierarchy: the root has no cgroup.type. In a container with a cgroup
// namespace of its own (containerd's default on cgroup v2), the
// container's /sys/fs/cgroup is its own group, so a socket-level
// balancer attached there would miss the node's other processes.
func subgroup(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "cgroup.type"))
	return err == nil
}

// sockLB attaches the socket-level load balancer with --bpf-lb-sock, and
// detaches one a previous run left without it; with
// --bpf-lb-sock-hostns-only it translates the sockets of netns only
// (--datapath-netns; empty: the agent's namespace).
func sockLB(log *slog.Logger, l *loader.Loader, c Config, netns string) error {
	if !c.BPFLBSock {
		return l.DetachSockLB()
	}
	var st unix.Statfs_t
	if err := unix.Statfs(c.CgroupRoot, &st); err != nil {
		return fmt.Errorf("--cgroup-root %s: %w", c.CgroupRoot, err)
	}
	if st.Type != unix.CGROUP2_SUPER_MAGIC {
		return fmt.Errorf("--cgroup-root %s is not a cgroup v2 mount (the socket-level load balancer needs one)", c.CgroupRoot)
	}
	if subgroup(c.CgroupRoot) {
		log.Warn("--cgroup-root is not the root of its cgroup hierarchy (a sub-group, or the root of a container's cgroup namespace): "+
			"only the processes under it are balanced at the socket; in a pod, mount the host's cgroup2 (the DaemonSet's /host/sys/fs/cgroup)",
			"cgroup", c.CgroupRoot)
	}
	node, err := netnsutil.CookieAt(netns)
	if err != nil {
		return fmt.Errorf("--bpf-lb-sock: the node's network namespace: %w", err)
	}
	var cookie uint64
	if c.BPFLBSockHostnsOnly {
		cookie = node
	}
	if err := l.AttachSockLB(c.CgroupRoot, cookie); err != nil {
		return err
	}
	if c.NodePortBindProtection {
		err = l.AttachBindProtection(c.CgroupRoot, node)
	} else {
		err = l.DetachBindProtection()
	}
	if err != nil {
		return err
	}
	log.Info("Socket-level load balancer attached", "cgroup", c.CgroupRoot, "hostNamespaceOnly", c.BPFLBSockHostnsOnly,
		"nodePortBindProtection", c.NodePortBindProtection)
	return nil
}
