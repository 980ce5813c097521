package loadercell

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/datapath/linux"
	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
)

// devices are the node's external devices, those the NodePort programs
// are attached to and whose addresses NodePorts are served on: those of
// --datapath-netns chosen as Cilium chooses them (--devices' matches, or
// detected: chooseDevices), followed as devices, addresses and routes
// change.
type devices struct {
	log     *slog.Logger
	filter  deviceFilter
	enforce bool // --enforce-device-detection
	netns   string
	enabled bool // --enable-node-port (or --kube-proxy-replacement)

	// readMu makes each detection whole (read, choose, tell): the
	// start's and the follower's never apply an older choice last.
	readMu  sync.Mutex
	mu      sync.Mutex
	chosen  []netDevice
	why     map[string]string // why each other device is not chosen
	lastErr error             // of the last detection
	// detected: a detection succeeded, so chosen is the namespace's
	// choice (before, an empty chosen says nothing).
	detected bool
	subs     []func(chosen []netDevice)
	// readSubs are told of every reading (afterRead).
	readSubs []func()
}

type devicesParams struct {
	cell.In

	Config    Config
	Linux     linux.Config `optional:"true"`
	Lifecycle cell.Lifecycle
	Jobs      job.Group
	Log       *slog.Logger
}

// debounce is how long the follower waits after a change for the rest
// of its burst (a device coming up brings its link, addresses and
// routes one after the other).
const debounce = 100 * time.Millisecond

func newDevices(p devicesParams) *devices {
	c := p.Config.effective()
	d := &devices{log: p.Log, filter: c.Devices, netns: p.Linux.DatapathNetNS, enabled: c.EnableNodePort,
		enforce: c.EnforceDeviceDetection}
	if !d.enabled {
		return d
	}
	named := !c.EnforceDeviceDetection && deviceFilter(c.Devices).names()
	p.Lifecycle.Append(cell.Hook{OnStart: func(cell.HookContext) error {
		if named { // a name that is no device is a mistake: say so now
			if err := d.checkNamed(); err != nil {
				return err
			}
		}
		if err := d.read(); err != nil {
			d.log.Warn("Unable to read the node's devices for NodePort", "error", err)
		}
		return nil
	}})
	p.Jobs.Add(job.OneShot("device-detection", d.follow))
	return d
}

// checkNamed reports the first device --devices names that
// --datapath-netns does not have.
func (d *devices) checkNamed() error {
	h, err := handleAt(d.netns)
	if err != nil {
		return err
	}
	defer h.Close()
	for _, name := range d.filter {
		if _, err := h.LinkByName(name); err != nil {
			return fmt.Errorf("--devices %s: %w", name, err)
		}
	}
	return nil
}

// names returns the chosen devices' names.
func (d *devices) names() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.namesLocked()
}

// current returns the chosen devices and whether they are known:
// NodePort off (none), or a reading of the devices succeeded.
func (d *devices) current() (chosen []netDevice, known bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.chosen), !d.enabled || d.detected
}

// subscribe calls fn with the chosen devices after every change of them
// (the start's detection's too, from the start hook, before the
// follower's).
func (d *devices) subscribe(fn func(chosen []netDevice)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.subs = append(d.subs, fn)
}

// afterRead calls fn after every successful reading of the devices:
// after every burst of device, address and route changes, whether or
// not the choice changed (the NodePort addresses follow the devices'
// addresses with it).
func (d *devices) afterRead(fn func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.readSubs = append(d.readSubs, fn)
}

// status is the status line's part: the chosen devices and how, or why
// there are none (any: false).
func (d *devices) status() (text string, any bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	how := "detected" // how the devices were chosen
	if d.filter.positive() {
		how = "matching --devices=" + strings.Join(d.filter, ",")
		if d.enforce {
			how += ", and detected"
		}
	}
	switch {
	case d.lastErr != nil && len(d.chosen) > 0: // the last choice stays
		return strings.Join(d.namesLocked(), ", ") + " (" + how + "; detecting again failed: " + d.lastErr.Error() + ")", true
	case d.lastErr != nil:
		return "no device: detection failed: " + d.lastErr.Error(), false
	case len(d.chosen) == 0:
		return "no device (none " + how + ": " + d.whyText() + ")", false
	}
	return strings.Join(d.namesLocked(), ", ") + " (" + how + ")", true
}

func (d *devices) namesLocked() []string {
	out := make([]string, len(d.chosen))
	for i, dev := range d.chosen {
		out[i] = dev.name
	}
	return out
}

// maxReasons is how many devices the status line gives a reason for.
const maxReasons = 8

// whyText lists why the devices were not chosen, "eth1: down; ...": at
// most maxReasons of them, those named as detection never takes them
// (lo, lxc*, ...: a node has one per pod) counted only.
func (d *devices) whyText() string {
	var parts []string
	named, unmatched, more := 0, 0, 0
	for _, n := range slices.Sorted(maps.Keys(d.why)) {
		switch {
		case strings.HasPrefix(d.why[n], "named "):
			named++
		case d.why[n] == notMatching:
			unmatched++
		case len(parts) == maxReasons:
			more++
		default:
			parts = append(parts, n+": "+d.why[n])
		}
	}
	if more > 0 {
		parts = append(parts, fmt.Sprintf("%d more", more))
	}
	if unmatched > 0 {
		parts = append(parts, fmt.Sprintf("%d not matching --devices", unmatched))
	}
	if named > 0 {
		parts = append(parts, fmt.Sprintf("%d named as apiary's, other CNIs' and Docker's devices, and lo", named))
	}
	if len(parts) == 0 {
		return "the namespace has no devices"
	}
	return strings.Join(parts, "; ")
}

// read detects the devices and tells the subscribers when the choice
// changed.
func (d *devices) read() error {
	d.readMu.Lock()
	defer d.readMu.Unlock()
	chosen, why, err := d.detectOnce()
	d.mu.Lock()
	d.lastErr = err
	changed := err == nil && !slices.Equal(chosen, d.chosen)
	if err == nil {
		changed = changed || !d.detected
		d.chosen, d.why, d.detected = chosen, why, true
	}
	subs, readSubs := slices.Clone(d.subs), slices.Clone(d.readSubs)
	d.mu.Unlock()
	if err != nil {
		return err
	}
	if changed {
		others := maps.Clone(why) // without the devices no detection takes (one per pod)
		maps.DeleteFunc(others, func(_, reason string) bool { return strings.HasPrefix(reason, "named ") })
		d.log.Info("Devices for NodePort detected", "devices", d.names(), "notChosen", others)
		for _, fn := range subs {
			fn(chosen)
		}
	}
	for _, fn := range readSubs {
		fn()
	}
	return nil
}

// detectOnce reads the namespace's devices and chooses.
func (d *devices) detectOnce() ([]netDevice, map[string]string, error) {
	h, err := handleAt(d.netns)
	if err != nil {
		return nil, nil, err
	}
	defer h.Close()
	links, err := readLinks(h)
	if err != nil {
		return nil, nil, err
	}
	chosen, why := chooseDevices(links, d.filter, d.enforce)
	return chosen, why, nil
}

// follow detects the devices again after every change of the
// namespace's devices, addresses and routes (a burst of them once),
// until ctx ends. A subscription that ends (its socket failed: the
// kernel dropped messages it could not queue, ENOBUFS) is made again a
// second later, and the devices read again.
func (d *devices) follow(ctx context.Context, health cell.Health) error {
	for {
		err := d.followOnce(ctx, health)
		if ctx.Err() != nil {
			return nil
		}
		d.log.Warn("Following the node's devices stopped; subscribing again", "error", err, "after", resubscribe)
		health.Degraded("following the devices", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(resubscribe):
		}
	}
}

// resubscribe is how long the follower waits before it subscribes
// again.
const resubscribe = time.Second

// followOnce is follow with one set of subscriptions; it returns why
// they ended (nil: ctx ended).
func (d *devices) followOnce(ctx context.Context, health cell.Health) error {
	ns, err := openNetNS(d.netns)
	if err != nil {
		return err
	}
	defer ns.Close()
	changes, failed := make(chan struct{}, 1), make(chan error, 1)
	done := make(chan struct{})
	defer close(done)
	if err := subscribeChanges(ns, done, changes, failed, d.log); err != nil {
		return fmt.Errorf("follow the devices: %w", err)
	}
	// A change between the start's detection (or the last subscription)
	// and these subscriptions.
	if err := d.read(); err != nil {
		health.Degraded("detecting the devices", err)
	} else {
		health.OK("following the devices")
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-failed:
			return fmt.Errorf("follow the devices: %w", err)
		case <-changes:
		}
		select { // the rest of the burst
		case <-ctx.Done():
			return nil
		case <-time.After(debounce):
		}
		select {
		case <-changes:
		default:
		}
		if err := d.read(); err != nil {
			health.Degraded("detecting the devices", err)
			continue
		}
		health.OK("following the devices")
	}
}

// subscribeChanges signals changes (without blocking: one pending
// signal) on every device, address and route update of ns, and failed
// when a subscription ends, until done is closed. An error the
// subscriptions report and go on after (a message they could not read)
// signals a change too: the update it carried is read with the others.
// Once done is closed, the updates still coming are read and dropped,
// so that the subscriptions' goroutines, which block on a full channel,
// end.
func subscribeChanges(ns netns.NsHandle, done chan struct{}, changes chan<- struct{}, failed chan<- error, log *slog.Logger) error {
	signal := func() {
		select {
		case changes <- struct{}{}:
		default:
		}
	}
	onErr := func(err error) {
		log.Debug("Reading the node's device updates", "error", err)
		signal()
	}
	lu, au, ru := make(chan netlink.LinkUpdate, 64), make(chan netlink.AddrUpdate, 64), make(chan netlink.RouteUpdate, 64)
	if err := netlink.LinkSubscribeWithOptions(lu, done, netlink.LinkSubscribeOptions{Namespace: &ns, ErrorCallback: onErr}); err != nil {
		return err
	}
	if err := netlink.AddrSubscribeWithOptions(au, done, netlink.AddrSubscribeOptions{Namespace: &ns, ErrorCallback: onErr}); err != nil {
		drain(lu)
		return err
	}
	if err := netlink.RouteSubscribeWithOptions(ru, done, netlink.RouteSubscribeOptions{Namespace: &ns, ErrorCallback: onErr}); err != nil {
		drain(lu)
		drain(au)
		return err
	}
	go func() {
		defer func() { drain(lu); drain(au); drain(ru) }()
		for {
			ok := true
			select {
			case <-done:
				return
			case _, ok = <-lu:
			case _, ok = <-au:
			case _, ok = <-ru:
			}
			if !ok {
				select {
				case failed <- errors.New("a subscription to the device, address and route updates ended"):
				default:
				}
				return
			}
			signal()
		}
	}()
	return nil
}

// drain reads ch until the subscription's goroutine closes it (it does
// once its socket is closed, when done is), in the background.
func drain[T any](ch <-chan T) {
	go func() {
		for range ch {
		}
	}()
}

// handleAt returns a netlink handle in --datapath-netns (path), or in
// the agent's namespace.
func handleAt(path string) (*netlink.Handle, error) {
	ns, err := openNetNS(path)
	if err != nil {
		return nil, err
	}
	defer ns.Close() // the handle's sockets stay in the namespace
	return netlink.NewHandleAt(ns)
}

// openNetNS opens --datapath-netns (netnsutil.Open: never blocks, and
// only a network namespace), or the agent's namespace.
func openNetNS(path string) (netns.NsHandle, error) {
	if path == "" {
		return netns.Get()
	}
	ns, err := netnsutil.Open(path)
	if err != nil {
		return netns.None(), fmt.Errorf("--datapath-netns %s: %w", path, err)
	}
	return ns, nil
}
