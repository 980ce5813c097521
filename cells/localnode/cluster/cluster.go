package cluster

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/spf13/pflag"
)

// DefaultName is the name of a cluster that was not given one.
const DefaultName = "default"

// The sizes a mesh can have (--max-connected-clusters).
const (
	MaxConnectedClusters255 = 255
	MaxConnectedClusters511 = 511
)

// Info identifies this cluster in a mesh, with Cilium's flags.
type Info struct {
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

// DefaultInfo is Cilium's default.
var DefaultInfo = Info{ClusterName: DefaultName, MaxConnectedClusters: MaxConnectedClusters255}

// Flags registers --cluster-name, --cluster-id and --max-connected-clusters.
func (def Info) Flags(fs *pflag.FlagSet) {
	fs.String("cluster-name", def.ClusterName, "Name of the cluster (lower-case alphanumerics and '-', at most 32 characters)")
	fs.Uint32("cluster-id", def.ClusterID, "Unique identifier of the cluster (0..255, or 0..511 with --max-connected-clusters=511)")
	fs.Uint32("max-connected-clusters", def.MaxConnectedClusters, "Maximum number of clusters in the mesh: 255 or 511")
}

// clusterNamePattern is Cilium's rule for cluster names.
var clusterNamePattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$`)

// ValidateName checks a cluster name against Cilium's rules: at
// most 32 lower-case alphanumerics and '-', starting and ending with an
// alphanumeric.
func ValidateName(name string) error {
	if !clusterNamePattern.MatchString(name) {
		return fmt.Errorf("%q must be at most 32 lower-case alphanumerics and '-', starting and ending with an alphanumeric", name)
	}
	return nil
}

// Validate applies Cilium's rules; errors name the flag.
func (c *Info) Validate() error {
	var errs []error
	if err := ValidateName(c.ClusterName); err != nil {
		errs = append(errs, fmt.Errorf("--cluster-name: %w", err))
	}
	switch c.MaxConnectedClusters {
	case MaxConnectedClusters255, MaxConnectedClusters511:
	default:
		errs = append(errs, fmt.Errorf("--max-connected-clusters: %d is not 255 or 511", c.MaxConnectedClusters))
	}
	if maxID := c.MaxClusterID(); c.ClusterID > maxID {
		errs = append(errs, fmt.Errorf("--cluster-id: %d is out of range 0..%d", c.ClusterID, maxID))
	}
	return errors.Join(errs...)
}

// MaxClusterID is the largest cluster id of the mesh.
func (c *Info) MaxClusterID() uint32 {
	if c.MaxConnectedClusters == MaxConnectedClusters511 {
		return 511
	}
	return 255
}

// ClusterIDShift is the bit position of the cluster id in a global
// security identity: 16, or 15 in a mesh of 511 clusters.
func (c *Info) ClusterIDShift() uint {
	if c.MaxConnectedClusters == MaxConnectedClusters511 {
		return 15
	}
	return 16
}

// ValidateRemote checks the name and id of a remote cluster as this
// cluster sees it: a valid name, an id in this mesh's range that is not
// 0 and not this cluster's own.
func (c *Info) ValidateRemote(name string, id uint32) error {
	var errs []error
	if err := ValidateName(name); err != nil {
		errs = append(errs, fmt.Errorf("cluster name: %w", err))
	}
	switch {
	case id == 0:
		errs = append(errs, errors.New("cluster id: 0 is not allowed in a mesh"))
	case id > c.MaxClusterID():
		errs = append(errs, fmt.Errorf("cluster id: %d is out of range 1..%d (--max-connected-clusters=%d)", id, c.MaxClusterID(), c.MaxConnectedClusters))
	case id == c.ClusterID:
		errs = append(errs, fmt.Errorf("cluster id: %d is this cluster's own (%s)", id, c.ClusterName))
	}
	return errors.Join(errs...)
}
