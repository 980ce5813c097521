package loader

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"path/filepath"
	"slices"
	"sync"

	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/bpf"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap"
	"github.com/apiary-net/apiary/datapath/maps/configmap"
	"github.com/apiary-net/apiary/datapath/maps/ctmap"
	"github.com/apiary-net/apiary/datapath/maps/endpointsmap"
	"github.com/apiary-net/apiary/datapath/maps/eventsmap"
	"github.com/apiary-net/apiary/datapath/maps/ipcachemap"
	"github.com/apiary-net/apiary/datapath/maps/lbmap"
	"github.com/apiary-net/apiary/datapath/maps/metricsmap"
	"github.com/apiary-net/apiary/datapath/maps/policymap"
)

// sharedMaps are the maps every endpoint's programs use, pinned once under
// the root (the load-balancing maps too).
var sharedMaps = append([]string{
	ipcachemap.MapName, ctmap.MapName4, ctmap.MapName6, endpointsmap.MapName, configmap.MapName,
	FragsMapName, metricsmap.MapName, eventsmap.MapName,
}, lbmap.MapNames...)

// FragsMapName is the shared map of fragment ports (no Go access needed:
// only the programs read and write it).
const FragsMapName = "frags"

// Loader loads and attaches endpoint programs.
type Loader struct {
	log          *slog.Logger
	root         string
	policyMapMax uint32
	lbMapMax     uint32 // 0: the programs' default
	mode         AttachMode

	mu         sync.Mutex
	shared     map[string]*ebpf.Map
	revs       *endpointsmap.Map // over shared[endpoints.MapName]
	links      map[uint16]*endpointLinks
	policyMaps map[uint16]*policymap.Map // open for the policy-map writer
	// tunnelIfIndex is the tunnel device endpoint programs encapsulate
	// to (AttachOverlay); 0: native routing.
	tunnelIfIndex int
	// loopback and loopback6 are the sources of hairpinned flows
	// (WithServiceLoopback, WithServiceLoopback6).
	loopback, loopback6 netip.Addr
	// noBackendDrop: packets to a service without backends are dropped,
	// not refused (WithServiceNoBackendResponse).
	noBackendDrop bool
	// externalClusterIP: the NodePort programs balance ClusterIP
	// frontends too (WithExternalClusterIP).
	externalClusterIP bool
}

// New returns a loader pinning under root (see Open); policyMapMax is the
// size of each endpoint's policy map (--bpf-policy-map-max).
func New(log *slog.Logger, root string, policyMapMax uint32, opts ...Option) (*Loader, error) {
	if root == "" {
		return nil, fmt.Errorf("new loader: --bpf-root must not be empty")
	}
	if policyMapMax == 0 {
		return nil, fmt.Errorf("new loader: --bpf-policy-map-max must be positive")
	}
	l := &Loader{
		log: log, root: root, policyMapMax: policyMapMax,
		links: make(map[uint16]*endpointLinks), policyMaps: make(map[uint16]*policymap.Map),
		loopback: DefaultServiceLoopback, loopback6: DefaultServiceLoopback6,
	}
	for _, o := range opts {
		o(l)
	}
	if l.loopback.IsValid() {
		if err := CheckServiceLoopback(l.loopback); err != nil {
			return nil, fmt.Errorf("new loader: %w", err)
		}
	}
	if l.loopback6.IsValid() {
		if err := CheckServiceLoopback6(l.loopback6); err != nil {
			return nil, fmt.Errorf("new loader: %w", err)
		}
	}
	return l, nil
}

// Open mounts the bpffs root if needed and opens (or creates) the shared
// maps. Call it before anything else; Close undoes it.
func (l *Loader) Open() error {
	l.mu.Lock()
	open := l.shared != nil
	l.mu.Unlock()
	if open {
		return fmt.Errorf("open loader: already open")
	}
	if err := bpfmap.EnsureRoot(l.root); err != nil {
		return fmt.Errorf("open loader: %w", err)
	}
	shared := make(map[string]*ebpf.Map, len(sharedMaps))
	for _, name := range sharedMaps {
		m, err := l.openShared(name)
		if err != nil {
			for _, m := range shared {
				m.Close()
			}
			return fmt.Errorf("open loader: %w", err)
		}
		shared[name] = m
	}
	l.mu.Lock()
	l.shared = shared
	l.revs = endpointsmap.New(shared[endpointsmap.MapName])
	l.mu.Unlock()
	return nil
}

// openShared opens or creates the shared map name; the load-balancing
// maps with --bpf-lb-map-max entries (a pinned map of another size is
// replaced, its entries lost, as when its layout changed).
func (l *Loader) openShared(name string) (*ebpf.Map, error) {
	if !slices.Contains(lbmap.MapNames, name) || l.lbMapMax == 0 {
		return bpfmap.OpenShared(l.log, l.root, name)
	}
	spec, err := lbmap.Spec(name, l.lbMapMax)
	if err != nil {
		return nil, err
	}
	return bpfmap.OpenOrCreate(l.log, spec, filepath.Join(l.root, name))
}

// sharedReplacements returns the shared maps spec uses, and sizes spec's
// maps like them (a replacement must match its spec).
func (l *Loader) sharedReplacements(spec *ebpf.CollectionSpec) (map[string]*ebpf.Map, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.shared == nil {
		return nil, false
	}
	repl := map[string]*ebpf.Map{}
	for name, ms := range spec.Maps {
		if m := l.shared[name]; m != nil {
			ms.MaxEntries = m.MaxEntries()
			repl[name] = m
		}
	}
	return repl, true
}

// newSharedCollection loads spec with the shared maps it uses; what
// names it in errors ("load socket terminator").
func (l *Loader) newSharedCollection(spec *ebpf.CollectionSpec, what string) (*ebpf.Collection, error) {
	repl, open := l.sharedReplacements(spec)
	if !open {
		return nil, fmt.Errorf("%s: loader not open", what)
	}
	coll, err := ebpf.NewCollectionWithOptions(spec, ebpf.CollectionOptions{MapReplacements: repl})
	if err != nil {
		return nil, loadError(what, err)
	}
	return coll, nil
}

// Close releases the loader's file descriptors. Pinned maps and links stay,
// so attached programs keep enforcing.
func (l *Loader) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	for _, m := range l.shared {
		errs = append(errs, m.Close())
	}
	for id, el := range l.links {
		errs = append(errs, el.close())
		delete(l.links, id)
	}
	for id, pm := range l.policyMaps {
		errs = append(errs, pm.Close())
		delete(l.policyMaps, id)
	}
	l.shared, l.revs = nil, nil
	return errors.Join(errs...)
}

// Root returns the bpffs root.
func (l *Loader) Root() string { return l.root }

// PolicyMap opens endpoint id's policy map (creating it if missing); the
// caller closes it. SyncPolicyMap and ApplyPolicyMapChanges are the
// writer's interface.
func (l *Loader) PolicyMap(id uint16) (*policymap.Map, error) {
	return policymap.Open(l.log, l.root, id, l.policyMapMax)
}

// Programs are an endpoint's loaded programs.
type Programs struct {
	FromContainer *ebpf.Program
	ToContainer   *ebpf.Program
}

// Close releases the programs (attached ones stay attached via their links).
func (p *Programs) Close() error {
	return errors.Join(p.FromContainer.Close(), p.ToContainer.Close())
}

// Load loads ep's programs with its constants and policy map, without
// attaching them (ep.IfIndex may be 0). Attach uses it; so do
// BPF_PROG_TEST_RUN users.
func (l *Loader) Load(ep datapath.EndpointSpec) (*Programs, error) {
	if err := checkEndpoint(ep); err != nil {
		return nil, fmt.Errorf("load endpoint programs: %w", err)
	}
	spec, err := bpfmap.CollectionSpec()
	if err != nil {
		return nil, err
	}
	consts := map[string]any{
		bpf.LxcVarEndpointId:             uint32(ep.ID),
		bpf.LxcVarEndpointIdentity:       uint32(ep.Identity),
		bpf.LxcVarEnforceIngress:         enforceByte(ep.IngressEnforcement, ep.PolicyAudit),
		bpf.LxcVarEnforceEgress:          enforceByte(ep.EgressEnforcement, ep.PolicyAudit),
		bpf.LxcVarTunnelIfindex:          uint32(l.TunnelIfIndex()),
		bpf.LxcVarServiceLoopbackIpv4:    loopbackWord(l.loopback),
		bpf.LxcVarServiceLoopbackIpv6:    loopbackWords(l.loopback6),
		bpf.LxcVarServiceNoBackendReject: l.noBackendReject(),
	}
	if err := setVariables(spec, consts); err != nil {
		return nil, fmt.Errorf("load endpoint %d programs: %w", ep.ID, err)
	}
	pm, err := l.PolicyMap(uint16(ep.ID))
	if err != nil {
		return nil, err
	}
	defer pm.Close()
	spec.Maps[policymap.SpecName].MaxEntries = l.policyMapMax
	repl, open := l.sharedReplacements(spec)
	if !open {
		return nil, fmt.Errorf("load endpoint %d programs: loader not open", ep.ID)
	}
	repl[policymap.SpecName] = pm.EBPF()
	var objs bpf.LxcPrograms
	if err := spec.LoadAndAssign(&objs, &ebpf.CollectionOptions{MapReplacements: repl}); err != nil {
		return nil, loadError(fmt.Sprintf("load endpoint %d programs", ep.ID), err)
	}
	return &Programs{FromContainer: objs.FromContainer, ToContainer: objs.ToContainer}, nil
}

// removePolicyMap closes the writer's handle on endpoint id's policy map
// and unpins it; l.mu is held.
func (l *Loader) removePolicyMap(id uint16) error {
	var errs []error
	if pm := l.policyMaps[id]; pm != nil {
		errs = append(errs, pm.Close())
		delete(l.policyMaps, id)
	}
	return errors.Join(append(errs, policymap.Remove(l.root, id))...)
}

// loopbackWord is a as the programs' service_loopback_ipv4 holds it: the
// address's bytes in network order; 0 when a is the invalid Addr.
func loopbackWord(a netip.Addr) uint32 {
	if !a.IsValid() {
		return 0
	}
	b := a.As4()
	return binary.NativeEndian.Uint32(b[:])
}

// setVariables sets the constants vars (name -> value) of spec's
// programs.
func setVariables(spec *ebpf.CollectionSpec, vars map[string]any) error {
	for name, v := range vars {
		if err := spec.Variables[name].Set(v); err != nil {
			return fmt.Errorf("set %s: %w", name, err)
		}
	}
	return nil
}

// noBackendReject is the programs' service_no_backend_reject.
func (l *Loader) noBackendReject() uint8 { return boolByte(!l.noBackendDrop) }

// loopbackWords is a as the programs' service_loopback_ipv6 holds it;
// zeros when a is the invalid Addr.
func loopbackWords(a netip.Addr) [4]uint32 {
	var w [4]uint32
	if !a.IsValid() {
		return w
	}
	b := a.As16()
	for i := range w {
		w[i] = binary.NativeEndian.Uint32(b[4*i:])
	}
	return w
}

// CheckServiceLoopback6 refuses an IPv6 hairpin source address (see
// WithServiceLoopback6) that is not a routed unicast one: the pod sends
// its answers to it through its default route, which a link-local
// address does not take.
func CheckServiceLoopback6(a netip.Addr) error {
	if !a.Is6() || a.Is4In6() || a.IsUnspecified() || a.IsMulticast() || a.IsLoopback() || a.IsLinkLocalUnicast() {
		return fmt.Errorf("--ipv6-service-loopback-address %s is not a routed IPv6 unicast address (link-local ones are not)", a)
	}
	return nil
}

// CheckServiceLoopback refuses a hairpin source address (see
// WithServiceLoopback) that is not IPv4 unicast: the pod would drop
// packets from it.
func CheckServiceLoopback(a netip.Addr) error {
	if !a.Is4() || a.IsUnspecified() || a.IsMulticast() || a.IsLoopback() || a == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return fmt.Errorf("--ipv4-service-loopback-address %s is not an IPv4 unicast address", a)
	}
	return nil
}

// loadError says what failed to load; a verifier error with its log.
func loadError(what string, err error) error {
	var ve *ebpf.VerifierError
	if errors.As(err, &ve) {
		return fmt.Errorf("%s: %+v", what, ve)
	}
	return fmt.Errorf("%s: %w", what, err)
}
