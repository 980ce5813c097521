package identity

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/spf13/pflag"
)

// ClusterConfig identifies this cluster in a mesh, with Cilium's flags.
type ClusterConfig struct {
	// ClusterName is the name of the cluster; every endpoint identity
	// carries it as k8s:io.cilium.k8s.policy.cluster.
	ClusterName string
	// ClusterID is 0..255 (0..511 with --max-connected-clusters=511); it
	// is the upper part of every global identity allocated here. Meshed
	// clusters need distinct, non-zero ids.
	ClusterID uint32
	// MaxConnectedClusters is 255 or 511.
	MaxConnectedClusters uint32
}

// DefaultClusterConfig is Cilium's default.
var DefaultClusterConfig = ClusterConfig{ClusterName: "default", MaxConnectedClusters: 255}

// Flags registers --cluster-name, --cluster-id and --max-connected-clusters.
func (def ClusterConfig) Flags(fs *pflag.FlagSet) {
	fs.String("cluster-name", def.ClusterName, "Name of the cluster (lower-case alphanumerics and '-', at most 32 characters)")
	fs.Uint32("cluster-id", def.ClusterID, "Unique identifier of the cluster (0..255, or 0..511 with --max-connected-clusters=511)")
	fs.Uint32("max-connected-clusters", def.MaxConnectedClusters, "Maximum number of clusters in the mesh: 255 or 511")
}

var clusterNamePattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$`)

// Validate applies Cilium's rules.
func (c *ClusterConfig) Validate() error {
	var errs []error
	if !clusterNamePattern.MatchString(c.ClusterName) {
		errs = append(errs, fmt.Errorf("--cluster-name: %q must be at most 32 lower-case alphanumerics and '-', starting and ending with an alphanumeric", c.ClusterName))
	}
	switch c.MaxConnectedClusters {
	case 255, 511:
	default:
		errs = append(errs, fmt.Errorf("--max-connected-clusters: %d is not 255 or 511", c.MaxConnectedClusters))
	}
	if max := c.maxClusterID(); c.ClusterID > max {
		errs = append(errs, fmt.Errorf("--cluster-id: %d is out of range 0..%d", c.ClusterID, max))
	}
	return errors.Join(errs...)
}

func (c *ClusterConfig) maxClusterID() uint32 {
	if c.MaxConnectedClusters == 511 {
		return 511
	}
	return 255
}

// clusterShift is the bit position of the cluster id in an identity.
func (c *ClusterConfig) clusterShift() uint {
	if c.MaxConnectedClusters == 511 {
		return 15
	}
	return 16
}

// IdentityRange returns the global identities this cluster allocates.
func (c *ClusterConfig) IdentityRange() (first, last NumericIdentity) {
	shift := c.clusterShift()
	base := NumericIdentity(c.ClusterID) << shift
	return base + MinAllocationIdentity, base + NumericIdentity(1)<<shift - 1
}

// ClusterIDOf returns the cluster id a global identity was allocated in.
func (c *ClusterConfig) ClusterIDOf(id NumericIdentity) uint32 {
	if id.Scope() != ScopeGlobal {
		return 0
	}
	return uint32(id>>c.clusterShift()) & c.maxClusterID()
}

// InRange reports whether id belongs to this cluster's global range.
func (c *ClusterConfig) InRange(id NumericIdentity) bool {
	first, last := c.IdentityRange()
	return id >= first && id <= last
}
