// Package k8spolicy watches the Kubernetes policy objects, NetworkPolicy
// (networking.k8s.io/v1), CiliumNetworkPolicy and
// CiliumClusterwideNetworkPolicy (cilium.io/v2, read as unstructured
// objects), and feeds them to the policy repository through the policy
// cell's Objects source: the Kubernetes step of docs/design.md, Flow 1:
// policy -> BPF policy map (and Flow 4: Kubernetes objects -> caches).
//
// Each object is parsed by the same decoder as --policy-dir files
// (policy/policyapi); its rules replace the object's previous rules in one
// revision and go away with it. An object the decoder refuses is logged
// with the reason and named in the "Policy" status line; its previous
// rules, if any, stay in force and the other objects are unaffected.
//
// Each watcher registers its cache with the cache-sync gate of cells/k8s:
// endpoints are not regenerated before every policy already in the API
// server is in the repository.
//
// It may import packages of cells, kvstore and policy, nothing of datapath
// or clustermesh and nothing that touches BPF (docs/design.md, Layers).
package k8spolicy
