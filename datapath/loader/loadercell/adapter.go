package loadercell

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"sync"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/linux"
	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
	"github.com/apiary-net/apiary/datapath/loader"
	"github.com/apiary-net/apiary/datapath/maps/ipcachemap"
	"github.com/apiary-net/apiary/datapath/maps/lbmap"
	"github.com/apiary-net/apiary/policy"
)

// Datapath adapts the *loader.Loader to the control plane's interfaces
// (datapath.Loader, datapath.PolicyMapWriter, datapath.IPCacheMapWriter,
// datapath.LBMapWriter):
// it converts the endpoint ids and Restore's errors, and runs the
// operations that name an interface by index in the datapath's network
// namespace (--datapath-netns).
type Datapath struct {
	l     *loader.Loader
	netns string
	log   *slog.Logger

	mu      sync.Mutex
	ipcache *ipcachemap.Map // open between start and stop
	lb      *lbmap.Writer   // open between start and stop
	// term destroys the sockets connected to deleted backends (with
	// --bpf-lb-sock; nil without).
	term *sockTerminator

	// nodePortMu orders the NodePort programs' attachments: the start's,
	// those of detected devices' changes and the retries. nodePorts are
	// the devices they are attached to, nodePortErr why the last
	// attempt left some out or on a device no longer chosen (nil: none),
	// retry the timer of the next attempt while it is set; open: between
	// start and stop.
	nodePortMu  sync.Mutex
	devices     *devices
	nodePorts   []netDevice
	nodePortErr error
	retry       *time.Timer
	open        bool
}

// nodePortRetry is how long after a failed attachment or detachment of
// the NodePort programs the next attempt comes.
var nodePortRetry = 5 * time.Second

var (
	_ datapath.Loader           = (*Datapath)(nil)
	_ datapath.PolicyMapWriter  = (*Datapath)(nil)
	_ datapath.IPCacheMapWriter = (*Datapath)(nil)
	_ datapath.LBMapWriter      = (*Datapath)(nil)
)

type adapterParams struct {
	cell.In

	Config    Config
	Loader    *loader.Loader
	Linux     linux.Config          `optional:"true"`
	Tunnel    datapath.TunnelDevice `optional:"true"`
	Devices   *devices
	Lifecycle cell.Lifecycle
	Jobs      job.Group
	Log       *slog.Logger
}

// newDatapath returns the adapter; it opens the ipcache map after the
// loader has opened the shared maps, and closes it at stop. At start it
// also attaches the overlay program to the tunnel device (tunnel
// routing; the Linux datapath created it in its own start hook, which
// runs first) or removes one left by an earlier run (native routing).
func newDatapath(p adapterParams) *Datapath {
	d := &Datapath{l: p.Loader, netns: p.Linux.DatapathNetNS, log: p.Log, devices: p.Devices}
	p.Config = p.Config.effective()
	if p.Config.BPFLBSock {
		d.term = newSockTerminator(d, p.Log, p.Config.BPFLBSockHostnsOnly)
		p.Jobs.Add(job.OneShot("lb-socket-terminator", func(ctx context.Context, _ cell.Health) error {
			d.term.run(ctx)
			return nil
		}))
	}
	p.Lifecycle.Append(cell.Hook{
		OnStart: func(cell.HookContext) error {
			if err := d.startOverlay(p.Tunnel); err != nil {
				return err
			}
			m, err := ipcachemap.Open(d.log, d.l.Root())
			if err != nil {
				return fmt.Errorf("open ipcache map: %w", err)
			}
			lb, err := lbmap.OpenWriter(d.log, d.l.Root())
			if err != nil {
				m.Close()
				return fmt.Errorf("open load-balancing maps: %w", err)
			}
			if err := d.startNodePorts(); err != nil {
				m.Close()
				lb.Close()
				return err
			}
			if d.term != nil {
				lb.OnBackendDeleted(d.term.add)
			}
			d.mu.Lock()
			d.ipcache, d.lb = m, lb
			d.mu.Unlock()
			return nil
		},
		OnStop: func(cell.HookContext) error {
			d.nodePortMu.Lock()
			d.open = false
			if d.retry != nil {
				d.retry.Stop()
			}
			d.nodePortMu.Unlock()
			d.mu.Lock()
			defer d.mu.Unlock()
			if d.ipcache == nil {
				return nil
			}
			err := errors.Join(d.ipcache.Close(), d.lb.Close())
			d.ipcache, d.lb = nil, nil
			return err
		},
	})
	p.Devices.subscribe(d.moveNodePorts)
	return d
}

// startNodePorts attaches the NodePort programs to the chosen devices
// at start (updating those of an earlier run), detaching the others. The
// choice is read under nodePortMu: one the follower made before the
// start is not lost. A failure is retried (settle) and the agent starts:
// a device may have gone between its reading and the attachment (a
// --devices name that is no device at all stops the start earlier, in
// the devices' hook).
func (d *Datapath) startNodePorts() error {
	d.nodePortMu.Lock()
	defer d.nodePortMu.Unlock()
	chosen, known := d.devices.current()
	err := d.inNetNS(func() (err error) {
		d.nodePorts, err = nodePort(d.log, d.l, chosen, nil, known)
		return err
	})
	d.open = true
	d.settle(err)
	return nil
}

// moveNodePorts follows a change of the detected devices: the programs
// go on the new ones and off those no longer chosen. What fails is
// tried again (settle).
func (d *Datapath) moveNodePorts([]netDevice) {
	d.nodePortMu.Lock()
	defer d.nodePortMu.Unlock()
	d.applyNodePorts()
}

// applyNodePorts makes the programs' devices the current choice (read
// now: a retry or a late subscriber call applies the newest);
// nodePortMu is held.
func (d *Datapath) applyNodePorts() {
	if !d.open {
		return
	}
	chosen, known := d.devices.current()
	err := d.inNetNS(func() (err error) {
		d.nodePorts, err = nodePort(d.log, d.l, chosen, d.nodePorts, known)
		return err
	})
	d.settle(err)
}

// settle records the result of an attempt and, when it failed, arms
// the next one; nodePortMu is held.
func (d *Datapath) settle(err error) {
	switch {
	case err != nil && (d.nodePortErr == nil || err.Error() != d.nodePortErr.Error()):
		d.log.Error("Unable to attach the NodePort programs to all chosen devices; trying again", "error", err, "retry", nodePortRetry)
	case err == nil && d.nodePortErr != nil:
		d.log.Info("NodePort programs on the chosen devices again", "devices", deviceNames(d.nodePorts))
	}
	d.nodePortErr = err
	if d.retry != nil {
		d.retry.Stop()
		d.retry = nil
	}
	if err != nil {
		d.retry = time.AfterFunc(nodePortRetry, func() {
			d.nodePortMu.Lock()
			defer d.nodePortMu.Unlock()
			d.applyNodePorts()
		})
	}
}

// nodePortFailure returns why the last change of the detected devices
// left some without the NodePort programs, nil if none.
func (d *Datapath) nodePortFailure() error {
	d.nodePortMu.Lock()
	defer d.nodePortMu.Unlock()
	return d.nodePortErr
}

// Attach implements datapath.Loader.
func (d *Datapath) Attach(_ context.Context, spec datapath.EndpointSpec) error {
	return d.inNetNS(func() error { return d.l.Attach(spec) })
}

// inNetNS runs fn in --datapath-netns, or in the agent's own namespace
// when it is empty.
func (d *Datapath) inNetNS(fn func() error) error {
	if d.netns == "" {
		return fn()
	}
	return netnsutil.RunPath(d.netns, fn)
}

// Detach implements datapath.Loader.
func (d *Datapath) Detach(_ context.Context, id datapath.EndpointID) error {
	return d.inNetNS(func() error { return d.l.Detach(uint16(id)) })
}

// Restore implements datapath.Loader: every failure wraps
// datapath.ErrNotAttached, as the endpoint manager then attaches the
// programs again at the endpoint's regeneration.
func (d *Datapath) Restore(_ context.Context, id datapath.EndpointID, ifindex int) error {
	err := d.inNetNS(func() error { return d.l.Restore(uint16(id), ifindex) })
	if err != nil && !errors.Is(err, datapath.ErrNotAttached) {
		return fmt.Errorf("%w: %w", datapath.ErrNotAttached, err)
	}
	return err
}

// SyncPolicyMap implements datapath.PolicyMapWriter.
func (d *Datapath) SyncPolicyMap(id datapath.EndpointID, desired policy.MapState) (added, removed int, err error) {
	return d.l.SyncPolicyMap(uint16(id), desired)
}

// ApplyPolicyMapChanges implements datapath.PolicyMapWriter.
func (d *Datapath) ApplyPolicyMapChanges(id datapath.EndpointID, changes policy.MapChanges) error {
	return d.l.ApplyPolicyMapChanges(uint16(id), changes)
}

// DeletePolicyMap implements datapath.PolicyMapWriter; a map already
// removed (by Detach) is not an error.
func (d *Datapath) DeletePolicyMap(id datapath.EndpointID) error {
	return d.l.DeletePolicyMap(uint16(id))
}

// ApplyIPCache implements datapath.IPCacheMapWriter.
func (d *Datapath) ApplyIPCache(changes []datapath.IPCacheMapChange) error {
	m, err := d.ipcacheMap()
	if err != nil {
		return err
	}
	return m.Apply(changes)
}

// ReconcileIPCache implements datapath.IPCacheMapWriter.
func (d *Datapath) ReconcileIPCache(entries []datapath.IPCacheMapEntry) (added, removed int, err error) {
	m, err := d.ipcacheMap()
	if err != nil {
		return 0, 0, err
	}
	return m.Reconcile(entries)
}

func (d *Datapath) ipcacheMap() (*ipcachemap.Map, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ipcache == nil {
		return nil, errors.New("write ipcache map: datapath not started")
	}
	return d.ipcache, nil
}

// startOverlay attaches the overlay program to the tunnel device, if
// there is one, else detaches a leftover overlay program.
func (d *Datapath) startOverlay(t datapath.TunnelDevice) error {
	ifindex := 0
	if t != nil {
		ifindex = t.TunnelIfIndex()
	}
	if ifindex == 0 {
		return d.inNetNS(d.l.DetachOverlay)
	}
	if err := d.inNetNS(func() error { return d.l.AttachOverlay(ifindex) }); err != nil {
		return fmt.Errorf("--routing-mode=tunnel: %w", err)
	}
	d.log.Info("Tunnel routing: endpoint programs encapsulate to the tunnel device", "ifindex", ifindex)
	return nil
}

// UpsertService implements datapath.LBMapWriter.
func (d *Datapath) UpsertService(svc datapath.LBService) error {
	w, err := d.lbWriter()
	if err != nil {
		return err
	}
	return w.UpsertService(svc)
}

// Changes implements datapath.LBMapWriter (0 before the datapath
// started).
func (d *Datapath) Changes() uint64 {
	w, err := d.lbWriter()
	if err != nil {
		return 0
	}
	return w.Changes()
}

// DeleteService implements datapath.LBMapWriter.
func (d *Datapath) DeleteService(frontend datapath.L3n4Addr) error {
	w, err := d.lbWriter()
	if err != nil {
		return err
	}
	return w.DeleteService(frontend)
}

// ReconcileServices implements datapath.LBMapWriter.
func (d *Datapath) ReconcileServices(svcs iter.Seq[datapath.LBService]) (added, removed int, err error) {
	w, err := d.lbWriter()
	if err != nil {
		return 0, 0, err
	}
	return w.ReconcileServices(svcs)
}

func (d *Datapath) lbWriter() (*lbmap.Writer, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.lb == nil {
		return nil, errors.New("write load-balancing maps: datapath not started")
	}
	return d.lb, nil
}
