package endpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apiary-net/apiary/cells/safefile"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// StateSubdir is the directory below the state directory that holds one
// file per endpoint, <id>.json.
const StateSubdir = "endpoints"

// maxStateFile bounds a state file read back at restore.
const maxStateFile = 1 << 20

// stateFile is an endpoint's state file.
type stateFile struct {
	ID           datapath.EndpointID      `json:"id"`
	NetNSPath    string                   `json:"netns-path"`
	IfName       string                   `json:"interface-name"`
	Labels       []string                 `json:"labels"`
	IPv4         netip.Addr               `json:"ipv4,omitzero"`
	IPv6         netip.Addr               `json:"ipv6,omitzero"`
	NamedPorts   []namedPortJSON          `json:"named-ports,omitempty"`
	Identity     identity.NumericIdentity `json:"identity"`
	HostIfName   string                   `json:"host-interface"`
	HostIfIndex  int                      `json:"host-ifindex"`
	MAC          string                   `json:"host-mac"`
	ContainerMAC string                   `json:"container-mac"`
	ContainerID  string                   `json:"container-id,omitempty"`
	PodNamespace string                   `json:"pod-namespace,omitempty"`
	PodName      string                   `json:"pod-name,omitempty"`
	// Creating marks the intent written before a creation's first side
	// effect: a restart that finds it removes whatever the creation had
	// made (veth, pins, programs) and the file.
	Creating bool `json:"creating,omitempty"`
}

// namedPortJSON is a named port in a state file.
type namedPortJSON struct {
	Name     string             `json:"name"`
	Port     uint16             `json:"port"`
	Protocol policyapi.Protocol `json:"protocol"`
}

func (m *Manager) stateDir() string { return filepath.Join(m.p.StateDir, StateSubdir) }

func (m *Manager) statePath(id datapath.EndpointID) string {
	return filepath.Join(m.stateDir(), strconv.Itoa(int(id))+".json")
}

// writeState writes the endpoint's state file atomically: a temporary
// file, synced, renamed over the old one, and the directory synced.
func (m *Manager) writeState(ep *endpoint) error { return m.writeStateFile(ep, false) }

// writeIntent writes the endpoint's state file marked as being created,
// before the creation's first side effect in the kernel.
func (m *Manager) writeIntent(ep *endpoint) error { return m.writeStateFile(ep, true) }

func (m *Manager) writeStateFile(ep *endpoint, creating bool) error {
	if m.p.StateDir == "" {
		return nil
	}
	m.mu.RLock()
	e := ep.snap
	m.mu.RUnlock()
	sf := stateFile{ID: e.ID, NetNSPath: e.NetNSPath, IfName: e.IfName, IPv4: e.IPv4, IPv6: e.IPv6,
		Identity: e.Identity, HostIfName: e.HostIfName, HostIfIndex: e.HostIfIndex, MAC: e.MAC, ContainerMAC: e.ContainerMAC,
		ContainerID: e.ContainerID, PodNamespace: e.Pod.Namespace, PodName: e.Pod.Name, Creating: creating}
	for _, l := range e.Labels {
		sf.Labels = append(sf.Labels, l.String())
	}
	for _, p := range e.NamedPorts {
		sf.NamedPorts = append(sf.NamedPorts, namedPortJSON(p))
	}
	data, err := json.MarshalIndent(sf, "", "  ")
	if err != nil {
		return fmt.Errorf("encode state of endpoint %d: %w", e.ID, err)
	}
	if err := writeFileAtomic(m.statePath(e.ID), append(data, '\n')); err != nil {
		return fmt.Errorf("write state of endpoint %d: %w", e.ID, err)
	}
	return nil
}

// writeFileAtomic replaces path with data so that a crash leaves either
// the old file or the new one, creating its directory if needed.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return err
	}
	return safefile.WriteFile(path, data, 0o600)
}

// removeState deletes the endpoint's state file; none is not an error.
func (m *Manager) removeState(id datapath.EndpointID) error {
	if m.p.StateDir == "" {
		return nil
	}
	if err := os.Remove(m.statePath(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove state file: %w", err)
	}
	return nil
}

// readStates reads every state file; a file that cannot be read or
// decoded is reported and left in place.
func (m *Manager) readStates(ctx context.Context) ([]Endpoint, []error) {
	entries, err := os.ReadDir(m.stateDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []error{fmt.Errorf("read state dir: %w", err)}
	}
	var (
		out  []Endpoint
		errs []error
	)
	for _, de := range entries {
		name := de.Name()
		if !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
			continue
		}
		e, err := m.readState(ctx, filepath.Join(m.stateDir(), name))
		if err != nil {
			errs = append(errs, fmt.Errorf("state file %s: %w", name, err))
			continue
		}
		out = append(out, e)
	}
	return out, errs
}

func (m *Manager) readState(ctx context.Context, path string) (Endpoint, error) {
	data, err := safefile.Read(ctx, path, safefile.Limits{MaxSize: maxStateFile})
	if err != nil {
		return Endpoint{}, err
	}
	var sf stateFile
	if err := json.Unmarshal(data, &sf); err != nil {
		return Endpoint{}, fmt.Errorf("decode: %w", err)
	}
	if want := strconv.Itoa(int(sf.ID)) + ".json"; sf.ID == 0 || filepath.Base(path) != want {
		return Endpoint{}, fmt.Errorf("field id: %d does not match the file name", sf.ID)
	}
	ls, err := labels.ParseList(labels.SourceK8s, sf.Labels...)
	if err != nil {
		return Endpoint{}, fmt.Errorf("field labels: %w", err)
	}
	var ports []policyapi.NamedPort
	for _, p := range sf.NamedPorts {
		ports = append(ports, policyapi.NamedPort(p))
	}
	if ports, err = checkNamedPorts(ports); err != nil {
		return Endpoint{}, err
	}
	if err := errors.Join(owner{sf.ContainerID, sf.PodNamespace, sf.PodName}.check()...); err != nil {
		return Endpoint{}, err
	}
	state := State("")
	if sf.Creating {
		state = stateCreating
	}
	return Endpoint{ID: sf.ID, State: state, NamedPorts: ports, NetNSPath: sf.NetNSPath, IfName: sf.IfName, Labels: ls, IPv4: sf.IPv4, IPv6: sf.IPv6,
		Identity: sf.Identity, HostIfName: sf.HostIfName, HostIfIndex: sf.HostIfIndex, MAC: sf.MAC, ContainerMAC: sf.ContainerMAC,
		ContainerID: sf.ContainerID, Pod: PodName{Namespace: sf.PodNamespace, Name: sf.PodName}}, nil
}
