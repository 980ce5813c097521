package ciliumpolicy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"

	ipcachetypes "github.com/cilium/cilium/pkg/ipcache/types"
	"github.com/cilium/cilium/pkg/k8s"
	ciliumv2 "github.com/cilium/cilium/pkg/k8s/apis/cilium.io/v2"
	slimnetv1 "github.com/cilium/cilium/pkg/k8s/slim/k8s/api/networking/v1"
	"github.com/cilium/cilium/pkg/policy/types"
	"github.com/cilium/cilium/pkg/policy/utils"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Resource is the rules of one policy object, as the agent's policy
// watchers hand them to the repository.
type Resource struct {
	ID      ipcachetypes.ResourceID
	Entries types.PolicyEntries
}

// Parser decodes policy documents into Cilium's types and parses them
// as the agent's watchers do, after Init.
type Parser struct {
	// Log is where Cilium logs go.
	Log *slog.Logger
	// ClusterForPolicies is what the agent passes to Parse: the local
	// cluster's name with --policy-default-local-cluster (Cilium's
	// default), "" without.
	ClusterForPolicies string
}

// ParseDocuments decodes every YAML document of data (split as kubectl
// splits them) strictly into a CiliumNetworkPolicy,
// CiliumClusterwideNetworkPolicy or NetworkPolicy, and parses each into
// one Resource. The first error stops it.
func (p Parser) ParseDocuments(data []byte) ([]Resource, error) {
	r := k8syaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []Resource
	for i := 1; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read document %d: %w", i, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		res, err := p.Parse(doc)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		out = append(out, res)
	}
}

// Parse decodes and parses one document.
func (p Parser) Parse(doc []byte) (Resource, error) {
	var meta struct {
		Kind string `json:"kind"`
	}
	if err := yaml.Unmarshal(doc, &meta); err != nil {
		return Resource{}, fmt.Errorf("decode kind: %w", err)
	}
	switch meta.Kind {
	case "CiliumNetworkPolicy":
		var cnp ciliumv2.CiliumNetworkPolicy
		if err := yaml.UnmarshalStrict(doc, &cnp); err != nil {
			return Resource{}, fmt.Errorf("decode CiliumNetworkPolicy: %w", err)
		}
		if cnp.Namespace == "" {
			cnp.Namespace = "default"
		}
		rules, err := cnp.Parse(p.Log, p.ClusterForPolicies)
		if err != nil {
			return Resource{}, fmt.Errorf("parse CiliumNetworkPolicy %s/%s: %w", cnp.Namespace, cnp.Name, err)
		}
		return Resource{
			ID:      ipcachetypes.NewResourceID(ipcachetypes.ResourceKindCNP, cnp.Namespace, cnp.Name),
			Entries: utils.RulesToPolicyEntries(rules),
		}, nil
	case "CiliumClusterwideNetworkPolicy":
		var ccnp ciliumv2.CiliumClusterwideNetworkPolicy
		if err := yaml.UnmarshalStrict(doc, &ccnp); err != nil {
			return Resource{}, fmt.Errorf("decode CiliumClusterwideNetworkPolicy: %w", err)
		}
		rules, err := ccnp.Parse(p.Log, p.ClusterForPolicies)
		if err != nil {
			return Resource{}, fmt.Errorf("parse CiliumClusterwideNetworkPolicy %s: %w", ccnp.Name, err)
		}
		return Resource{
			ID:      ipcachetypes.NewResourceID(ipcachetypes.ResourceKindCCNP, "", ccnp.Name),
			Entries: utils.RulesToPolicyEntries(rules),
		}, nil
	case "NetworkPolicy":
		var np slimnetv1.NetworkPolicy
		if err := yaml.UnmarshalStrict(doc, &np); err != nil {
			return Resource{}, fmt.Errorf("decode NetworkPolicy: %w", err)
		}
		if np.Namespace == "" {
			np.Namespace = "default"
		}
		defaultPolicyTypes(&np)
		entries, err := k8s.ParseNetworkPolicy(p.Log, p.ClusterForPolicies, &np)
		if err != nil {
			return Resource{}, fmt.Errorf("parse NetworkPolicy %s/%s: %w", np.Namespace, np.Name, err)
		}
		return Resource{
			ID:      ipcachetypes.NewResourceID(ipcachetypes.ResourceKindNetpol, np.Namespace, np.Name),
			Entries: entries,
		}, nil
	}
	return Resource{}, fmt.Errorf("kind %q is not a policy kind", meta.Kind)
}

// defaultPolicyTypes applies the API server's defaulting of
// spec.policyTypes, which every NetworkPolicy the agent receives has
// been through: Ingress, plus Egress when there are egress rules.
func defaultPolicyTypes(np *slimnetv1.NetworkPolicy) {
	if len(np.Spec.PolicyTypes) > 0 {
		return
	}
	np.Spec.PolicyTypes = []slimnetv1.PolicyType{slimnetv1.PolicyTypeIngress}
	if len(np.Spec.Egress) > 0 && !slices.Contains(np.Spec.PolicyTypes, slimnetv1.PolicyTypeEgress) {
		np.Spec.PolicyTypes = append(np.Spec.PolicyTypes, slimnetv1.PolicyTypeEgress)
	}
}

// Insert replaces the rules of res's object in the repository, as the
// agent's policy importer does for each object, and returns the new
// revision.
func (e *Engine) Insert(res Resource) uint64 {
	_, rev, _ := e.Repo.ReplaceByResource(res.Entries, res.ID)
	return rev
}
