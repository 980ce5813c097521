package simulate

import (
	"bytes"
	"errors"
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/apiary-net/apiary/policy/policyapi"
)

// Scenario is a simulation input file: a cluster's namespaces,
// endpoints (of this and other clusters), policies and queries.
type Scenario struct {
	// Cluster is the local cluster; policies apply to its endpoints.
	// Empty means "default".
	Cluster string `json:"cluster,omitempty" yaml:"cluster,omitempty"`
	// PolicyDefaultLocalCluster is the agent's
	// --policy-default-local-cluster for this scenario: when true (nil
	// means true), a peer selector that names no cluster selects the
	// local cluster only; when false it selects every cluster, as Cilium
	// 1.18 and older did.
	PolicyDefaultLocalCluster *bool       `json:"policyDefaultLocalCluster,omitempty" yaml:"policyDefaultLocalCluster,omitempty"`
	Namespaces                []Namespace `json:"namespaces,omitempty" yaml:"namespaces,omitempty"`
	Endpoints                 []Endpoint  `json:"endpoints,omitempty" yaml:"endpoints,omitempty"`
	// Policies are whole Kubernetes objects of the kinds policy/policyapi
	// parses, or Lists of them, kept as YAML nodes for policy/policyapi, which
	// decodes them as Kubernetes does (YAML 1.1 scalars).
	Policies []yaml.Node `json:"-" yaml:"policies,omitempty"`
	Queries  []Query     `json:"queries,omitempty" yaml:"queries,omitempty"`
	// Limits bound the policies' documents as the agent's flags do; set
	// by ParseScenarioLimits (the CLI's flags), not by the file.
	Limits policyapi.Limits `json:"-" yaml:"-"`
}

// Namespace is a namespace with its labels; kubernetes.io/metadata.name
// is added when missing.
type Namespace struct {
	Name   string            `json:"name" yaml:"name"`
	Labels map[string]string `json:"labels,omitempty" yaml:"labels,omitempty"`
}

// Endpoint is a pod: its labels, addresses and declared ports.
type Endpoint struct {
	Name      string            `json:"name" yaml:"name"`
	Namespace string            `json:"namespace" yaml:"namespace"`
	Cluster   string            `json:"cluster,omitempty" yaml:"cluster,omitempty"`
	Labels    map[string]string `json:"labels,omitempty" yaml:"labels,omitempty"`
	IPs       []string          `json:"ips,omitempty" yaml:"ips,omitempty"`
	Ports     []Port            `json:"ports,omitempty" yaml:"ports,omitempty"`
}

// Port is a declared container port, for named ports in policies.
type Port struct {
	Name     string `json:"name" yaml:"name"`
	Port     int    `json:"port" yaml:"port"`
	Protocol string `json:"protocol,omitempty" yaml:"protocol,omitempty"`
}

// Query is one connection to decide: from and to are "ns/name",
// "cluster/ns/name" or an IP address; protocol is TCP (default), UDP,
// SCTP, ICMP or ICMPv6. TCP, UDP and SCTP queries have a port; ICMP and
// ICMPv6 ones a type instead.
type Query struct {
	From     string `json:"from" yaml:"from"`
	To       string `json:"to" yaml:"to"`
	Port     int    `json:"port" yaml:"port"`
	Protocol string `json:"protocol,omitempty" yaml:"protocol,omitempty"`
	// Type is the ICMP or ICMPv6 message type of an ICMP or ICMPv6
	// query: a number in 0..255 or a name icmps rules accept
	// ("EchoRequest"), as in the rules' icmps fields.
	Type string `json:"type,omitempty" yaml:"type,omitempty"`
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
// duplicate keys are errors) as YAML 1.2, so that a namespace named y or
// no stays a string, within the default api.Limits. It does not validate
// the content; Load does.
func ParseScenario(name string, data []byte) (*Scenario, error) {
	return ParseScenarioLimits(name, data, policyapi.DefaultLimits())
}

// ParseScenarioLimits is ParseScenario within limits: the file, aliases
// expanded, within MaxInputSize, and its policies within both limits
// when the simulation is built.
func ParseScenarioLimits(name string, data []byte, limits policyapi.Limits) (*Scenario, error) {
	if int64(len(data)) > limits.MaxInput() {
		return nil, &ScenarioError{File: name, Err: limits.InputTooLarge(int64(len(data)))}
	}
	if err := checkExpandedSize(data, limits); err != nil {
		return nil, &ScenarioError{File: name, Err: fmt.Errorf("decode: %w", err)}
	}
	s := Scenario{Limits: limits}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		return nil, &ScenarioError{File: name, Err: fmt.Errorf("decode: %w", err)}
	}
	if s.Cluster == "" {
		s.Cluster = defaultCluster
	}
	return &s, nil
}

const defaultCluster = "default"
