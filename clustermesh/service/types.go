package service

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/kvstore/store"
)

// ErrForeignService marks an entry written for another cluster than the
// one it was read from.
var ErrForeignService = fmt.Errorf("%w: service of another cluster", store.ErrRefused)

// L4Addr is a port of a frontend or backend. The JSON names are Cilium's
// (its loadbalancer.L4Addr has no tags).
type L4Addr struct {
	// Protocol is TCP, UDP, SCTP or ANY.
	Protocol string `json:"Protocol"`
	Port     uint16 `json:"Port"`
}

// PortConfiguration maps a port name to its address.
type PortConfiguration map[string]*L4Addr

// ClusterService is a service of one cluster as Cilium stores it.
type ClusterService struct {
	Cluster   string `json:"cluster"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Frontends and Backends are keyed by IP address.
	Frontends map[string]PortConfiguration `json:"frontends"`
	Backends  map[string]PortConfiguration `json:"backends"`
	Labels    map[string]string            `json:"labels"`
	Selector  map[string]string            `json:"selector"`
	// IncludeExternal is set for a global service
	// (service.cilium.io/global: "true").
	IncludeExternal bool `json:"includeExternal"`
	// Shared is set when the cluster shares its backends
	// (global and not service.cilium.io/shared: "false").
	Shared    bool   `json:"shared"`
	ClusterID uint32 `json:"clusterID"`
}

// GetKeyName is <namespace>/<name>, the key below the cluster's prefix.
func (s *ClusterService) GetKeyName() string { return s.Namespace + "/" + s.Name }

// NamespacedName is <namespace>/<name>.
func (s *ClusterService) NamespacedName() string { return s.GetKeyName() }

// Marshal returns the stored value.
func (s *ClusterService) Marshal() ([]byte, error) { return json.Marshal(s) }

var protocols = map[string]bool{"TCP": true, "UDP": true, "SCTP": true, "ANY": true}

// Decode decodes the value stored at <namespace>/<name> (name) below a
// cluster's prefix; errors name the field and wrap store.ErrMalformed.
func Decode(name string, value []byte) (*ClusterService, error) {
	var s ClusterService
	if err := json.Unmarshal(value, &s); err != nil {
		return nil, fmt.Errorf("%w: decode cluster service %s: %w", store.ErrMalformed, name, err)
	}
	if err := s.validate(name); err != nil {
		return nil, fmt.Errorf("%w: validate cluster service %s: %w", store.ErrMalformed, name, err)
	}
	return &s, nil
}

func (s *ClusterService) validate(name string) error {
	switch {
	case s.Namespace == "":
		return errors.New("field namespace: empty")
	case s.Name == "":
		return errors.New("field name: empty")
	case name != "" && name != s.GetKeyName():
		return fmt.Errorf("fields namespace/name: %q does not match the key %q", s.GetKeyName(), name)
	case strings.Contains(s.Namespace, "/") || strings.Contains(s.Name, "/"):
		return fmt.Errorf("fields namespace/name: %q has a slash", s.GetKeyName())
	}
	if err := validatePorts("frontends", s.Frontends); err != nil {
		return err
	}
	return validatePorts("backends", s.Backends)
}

func validatePorts(field string, m map[string]PortConfiguration) error {
	for ip, ports := range m {
		if _, err := netip.ParseAddr(ip); err != nil {
			return fmt.Errorf("field %s: %w", field, err)
		}
		for pname, p := range ports {
			switch {
			case p == nil:
				return fmt.Errorf("field %s[%s][%s]: null", field, ip, pname)
			case !protocols[p.Protocol]:
				return fmt.Errorf("field %s[%s][%s].Protocol: unknown protocol %q", field, ip, pname, p.Protocol)
			}
		}
	}
	return nil
}

// CheckCluster refuses a service whose cluster name or id is not the
// remote's it was read from (ErrForeignService).
func (s *ClusterService) CheckCluster(c cluster.Info) error {
	if s.Cluster != c.ClusterName {
		return fmt.Errorf("field cluster: %w: %q, read from cluster %q", ErrForeignService, s.Cluster, c.ClusterName)
	}
	if s.ClusterID != c.ClusterID {
		return fmt.Errorf("field clusterID: %w: %d, cluster %q has id %d", ErrForeignService, s.ClusterID, c.ClusterName, c.ClusterID)
	}
	return nil
}
