package main

import (
	"fmt"
	"io"
	"iter"
	"strings"
	"sync"

	"github.com/spf13/pflag"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/policy/ipcache"
)

// datapathCell is the example datapath. It plugs into apiary through
// value groups and subscriptions: an ipcache listener
// (ipcache.ListenerOut), and, made by its endpoint table, a
// subscription to policy.RegenerationRequests and one to the
// selector cache's applied identity batches (OnApplied); and the
// datapath.LBMapWriter the service manager writes the services of
// --lb-state-file through. Where a real datapath writes BPF maps, it
// prints lines to out.
func datapathCell(out io.Writer) cell.Cell {
	return cell.Module("example-datapath", "Example datapath: prints the map state a BPF datapath would write",
		cell.Config(Config{}),
		cell.ProvidePrivate(
			func() *printer { return &printer{w: out} },
			newEndpointTable,
		),
		cell.Provide(
			func(p *printer) ipcache.ListenerOut { return ipcache.ListenerOut{Listener: p} },
			// The service manager (svcmanagercell) writes through it.
			func(p *printer) datapath.LBMapWriter { return p },
		),
		// Nothing else asks for the endpoint table: pull it in.
		cell.Invoke(func(*endpointTable) {}),
	)
}

// Config lists the endpoints of this node.
type Config struct {
	// Endpoint are the endpoints, one per flag: comma-separated labels
	// and an optional IP after '@' ("app=web,tier=front@10.0.1.5").
	Endpoint []string
}

// Flags registers --endpoint.
func (def Config) Flags(fs *pflag.FlagSet) {
	fs.StringArray("endpoint", def.Endpoint,
		"An endpoint of this node: labels[@ip], e.g. app=web@10.0.1.5 (labels are k8s: unless given a source; namespace default unless given); repeat for more")
}

// Validate parses every --endpoint.
func (c *Config) Validate() error {
	_, err := c.endpoints()
	return err
}

// printer writes whole lines for the listener and the endpoint table,
// which run on different goroutines.
type printer struct {
	mu       sync.Mutex
	w        io.Writer
	services map[datapath.L3n4Addr]string // frontend -> its line as printed
	changes  uint64
}

func (p *printer) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format+"\n", args...)
}

// OnIPCacheChanged implements ipcache.Listener: a BPF datapath would
// write the ipcache LPM map here (prefix -> identity, tunnel endpoint).
func (p *printer) OnIPCacheChanged(_ ipcache.Revision, changes []ipcache.Change) {
	for _, ch := range changes {
		switch {
		case ch.New == nil:
			p.printf("ipcache: %s deleted", ch.Prefix)
		case ch.New.TunnelPeer.IsValid():
			p.printf("ipcache: %s -> identity %d via %s", ch.Prefix, ch.New.Identity, ch.New.TunnelPeer)
		default:
			p.printf("ipcache: %s -> identity %d", ch.Prefix, ch.New.Identity)
		}
	}
}

// UpsertService implements datapath.LBMapWriter: a BPF datapath would
// write the frontend's service entries and its backends here. A frontend
// printed as it is now is not printed again (as a BPF datapath writes
// only what changed).
func (p *printer) UpsertService(svc datapath.LBService) error {
	backends := make([]string, 0, len(svc.Backends))
	for _, be := range svc.Backends {
		b := be.Addr.String()
		if be.State != datapath.BackendActive {
			b += " (terminating)"
		}
		backends = append(backends, b)
	}
	line := fmt.Sprintf("service: %s %s (%s) -> [%s]", svc.Frontend, svc.Type, svc.Name, strings.Join(backends, ", "))
	p.mu.Lock()
	if p.services == nil {
		p.services = map[datapath.L3n4Addr]string{}
	}
	same := p.services[svc.Frontend] == line
	p.services[svc.Frontend] = line
	if !same {
		p.changes++
	}
	p.mu.Unlock()
	if !same {
		p.printf("%s", line)
	}
	return nil
}

// DeleteService implements datapath.LBMapWriter.
func (p *printer) DeleteService(fe datapath.L3n4Addr) error {
	p.mu.Lock()
	_, ok := p.services[fe]
	delete(p.services, fe)
	if ok {
		p.changes++
	}
	p.mu.Unlock()
	if ok {
		p.printf("service: %s deleted", fe)
	}
	return nil
}

// Changes implements datapath.LBMapWriter.
func (p *printer) Changes() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.changes
}

// ReconcileServices implements datapath.LBMapWriter: the initial write
// of every frontend (this datapath has nothing left from a previous run).
func (p *printer) ReconcileServices(svcs iter.Seq[datapath.LBService]) (int, int, error) {
	n := 0
	for svc := range svcs {
		if err := p.UpsertService(svc); err != nil {
			return 0, 0, err
		}
		n++
	}
	return n, 0, nil
}
