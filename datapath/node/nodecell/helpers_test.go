package nodecell_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/datapath/node"
	"github.com/apiary-net/apiary/datapath/node/nodecell"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/ipcache/ipcachecell"
	"github.com/apiary-net/apiary/policy/ipcache/ipcachetest"
	"github.com/apiary-net/apiary/policy/labels"
)

// noAllocator is an identity.Allocator for tests where every identity is
// reserved (node addresses): allocating anything is an error.
type noAllocator struct{}

func (noAllocator) AllocateIdentity(_ context.Context, lbls labels.Labels) (*identity.Identity, bool, error) {
	return nil, false, fmt.Errorf("unexpected allocation of %s", lbls)
}
func (noAllocator) Release(context.Context, *identity.Identity) (bool, error) {
	return false, errors.New("unexpected release")
}
func (noAllocator) LookupIdentity(labels.Labels) *identity.Identity                { return nil }
func (noAllocator) LookupIdentityByID(identity.NumericIdentity) *identity.Identity { return nil }
func (noAllocator) GetIdentities() []*identity.Identity                            { return nil }
func (noAllocator) WaitForInitialGlobalIdentities(context.Context) error           { return nil }

// recorder is a node handler that keeps every call as a line.
type recorder struct {
	mu    sync.Mutex
	calls []string
	fail  error
}

func (r *recorder) Name() string { return "recorder" }

func (r *recorder) record(s string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, s)
	return r.fail
}

func (r *recorder) NodeAdd(n node.Node) error {
	return r.record("add " + n.GetKeyName() + " " + ips(n))
}
func (r *recorder) NodeUpdate(old, updated node.Node) error {
	return r.record("update " + old.GetKeyName() + " " + ips(old) + " -> " + ips(updated))
}
func (r *recorder) NodeDelete(n node.Node) error { return r.record("delete " + n.GetKeyName()) }
func (r *recorder) NodeValidateImplementation(n node.Node) error {
	return r.record("validate " + n.GetKeyName())
}

// take returns and forgets the calls, without the periodic validations
// (see takeAll).
func (r *recorder) take() []string {
	var out []string
	for _, c := range r.takeAll() {
		if !strings.HasPrefix(c, "validate ") {
			out = append(out, c)
		}
	}
	return out
}

// takeAll returns and forgets every call.
func (r *recorder) takeAll() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = nil
	return out
}

func ips(n node.Node) string {
	s := ""
	for i, a := range n.IPAddresses {
		if i > 0 {
			s += ","
		}
		s += a.IP.String()
	}
	return s
}

// testCells are what the node manager needs besides the kvstore: the
// local-node store, an allocator and the ipcache.
func testCells(alloc identity.Allocator) cell.Cell {
	return cell.Group(
		localnode.Cell,
		cell.Provide(func() identity.Allocator { return alloc }),
		ipcachecell.Cell,
	)
}

var localFlags = []string{"node-name=node-a", "node-ip=192.0.2.10"}

// startManager starts the node manager with a recording handler.
func startManager(t *testing.T, extraFlags ...string) (node.Manager, ipcache.IPCache, *recorder) {
	t.Helper()
	rec := &recorder{}
	var m node.Manager
	var ipc ipcache.IPCache
	celltest.StartWithFlags(t, append(slices.Clone(localFlags), extraFlags...),
		testCells(noAllocator{}), nodecell.Cell,
		cell.Provide(func() node.NodeHandlerOut { return node.NodeHandlerOut{Handler: rec} }),
		celltest.Capture(&m), celltest.Capture(&ipc))
	return m, ipc, rec
}

// entry describes the ipcache entry of ip as "id/source[ via peer]".
func entry(ipc ipcache.IPCache, ip string) string {
	return ipcachetest.EntryOf(ipc, ipcache.HostPrefix(netip.MustParseAddr(ip)))
}

// waitEntries waits until the ipcache holds want (ip -> entry as entry
// describes it) and reports every entry that differs at the deadline.
func waitEntries(t *testing.T, ipc ipcache.IPCache, want map[string]string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var wrong []string
		for ip, w := range want {
			if got := entry(ipc, ip); got != w {
				wrong = append(wrong, fmt.Sprintf("ipcache %s = %s, want %s", ip, got, w))
			}
		}
		if len(wrong) == 0 {
			return
		}
		if time.Now().After(deadline) {
			sort.Strings(wrong)
			t.Fatalf("after 20s:\n%s", strings.Join(wrong, "\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// remote returns a remote node of the default cluster.
func remote(name, ip string) node.Node {
	return node.Node{
		Name: name, Cluster: "default",
		IPAddresses: []node.Address{{Type: node.NodeInternalIP, IP: netip.MustParseAddr(ip)}},
	}
}
