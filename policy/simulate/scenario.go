package simulate

import (
	"encoding/json"
	"errors"
	"fmt"

	"sigs.k8s.io/yaml"
)

// Scenario is a simulation input file: a cluster's namespaces,
// endpoints (of this and other clusters), policies and queries.
type Scenario struct {
	// Cluster is the local cluster; policies apply to its endpoints.
	// Empty means "default".
	Cluster    string      `json:"cluster,omitempty"`
	Namespaces []Namespace `json:"namespaces,omitempty"`
	Endpoints  []Endpoint  `json:"endpoints,omitempty"`
	// Policies are whole Kubernetes objects of the kinds policy/api
	// parses, or Lists of them.
	Policies []json.RawMessage `json:"policies,omitempty"`
	Queries  []Query           `json:"queries,omitempty"`
}

// Namespace is a namespace with its labels; kubernetes.io/metadata.name
// is added when missing.
type Namespace struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
}

// Endpoint is a pod: its labels, addresses and declared ports.
type Endpoint struct {
	Name      string            `json:"name"`
	Namespace string            `json:"namespace"`
	Cluster   string            `json:"cluster,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
	IPs       []string          `json:"ips,omitempty"`
	Ports     []Port            `json:"ports,omitempty"`
}

// Port is a declared container port, for named ports in policies.
type Port struct {
	Name     string `json:"name"`
	Port     int    `json:"port"`
	Protocol string `json:"protocol,omitempty"`
}

// Query is one connection to decide: from and to are "ns/name",
// "cluster/ns/name" or an IP address; protocol is TCP (default), UDP or
// SCTP.
type Query struct {
	From     string `json:"from"`
	To       string `json:"to"`
	Port     int    `json:"port"`
	Protocol string `json:"protocol,omitempty"`
}

// ErrInvalid is wrapped by every error about a scenario's content.
var ErrInvalid = errors.New("invalid scenario")

// ScenarioError is one problem of a scenario file, naming the file and
// the entry ("endpoints[2] (x/b): ips[0]").
type ScenarioError struct {
	File  string
	Entry string
	Err   error
}

// Error returns "file: entry: problem".
func (e *ScenarioError) Error() string {
	if e.Entry == "" {
		return fmt.Sprintf("%s: %v", e.File, e.Err)
	}
	return fmt.Sprintf("%s: %s: %v", e.File, e.Entry, e.Err)
}

// Unwrap returns the problem.
func (e *ScenarioError) Unwrap() []error { return []error{e.Err, ErrInvalid} }

// ParseScenario decodes a scenario file strictly (unknown fields and
// duplicate keys are errors). It does not validate the content; Load does.
func ParseScenario(name string, data []byte) (*Scenario, error) {
	var s Scenario
	if err := yaml.UnmarshalStrict(data, &s); err != nil {
		return nil, &ScenarioError{File: name, Err: fmt.Errorf("decode: %w", err)}
	}
	if s.Cluster == "" {
		s.Cluster = defaultCluster
	}
	return &s, nil
}

const defaultCluster = "default"
