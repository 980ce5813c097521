package identitycell_test

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/kvstore/layout"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/identity/identitycache"
	"github.com/apiary-net/apiary/policy/identity/identitycell"
	"github.com/apiary-net/apiary/policy/labels"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// wireCases are identities whose kvstore form testdata/wire.golden holds.
var wireCases = []struct {
	comment string
	id      identity.NumericIdentity
	labels  labels.Labels
	nodeIP  string
}{
	{"a pod of cluster 0", 20000, labels.FromSlice([]labels.Label{
		labels.New(labels.SourceK8s, "app", "web"),
		labels.New(labels.SourceK8s, labels.KeyPolicyCluster, "default"),
		labels.New(labels.SourceK8s, labels.KeyPodNamespace, "default"),
	}), "192.168.1.17"},
	{"labels with '/' and an empty value, cluster 3, IPv6 node", 3<<16 + 4242, labels.FromSlice([]labels.Label{
		labels.New(labels.SourceK8s, "app.kubernetes.io/name", "checkout"),
		labels.New(labels.SourceK8s, labels.PrefixNamespaceLabels+".kubernetes.io/metadata.name", "shop"),
		labels.New(labels.SourceK8s, labels.KeyPolicyCluster, "prod"),
		labels.New(labels.SourceK8s, labels.KeyServiceAccount, "default"),
		labels.New(labels.SourceK8s, labels.KeyPodNamespace, "shop"),
		labels.New(labels.SourceK8s, "tier", ""),
	}), "fd00:10:244::3"},
}

// TestWireGolden: the keys and values of global identities, byte for byte.
func TestWireGolden(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Global identities in the kvstore: master key, then one node's reference.\n")
	for _, tc := range wireCases {
		master, ref := identitycache.KVStoreEntries(tc.id, tc.labels, tc.nodeIP)
		fmt.Fprintf(&b, "\n# %s\n%s => %s\n%s => %s\n", tc.comment, master.Key, master.Value, ref.Key, ref.Value)
	}
	path := filepath.Join("testdata", "wire.golden")
	if *update {
		must(t, os.WriteFile(path, []byte(b.String()), 0o644))
	}
	want, err := os.ReadFile(path)
	must(t, err)
	if b.String() != string(want) {
		t.Errorf("wire format changed (run with -update if on purpose):\n got:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestAgentWritesWireFormat: what an agent writes to etcd is exactly
// KVStoreEntries.
func TestAgentWritesWireFormat(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	a := startAgent(t, agentConfig{srv: srv, ip: "192.168.1.17"})
	id, _, err := a.alloc.AllocateIdentity(ctxFor(t), wireCases[0].labels)
	must(t, err)
	master, ref := identitycache.KVStoreEntries(id.ID, wireCases[0].labels, "192.168.1.17")
	resp, err := srv.Client().Get(ctxFor(t), layout.IdentitiesPrefix+"/", clientv3.WithPrefix())
	must(t, err)
	got := map[string]string{}
	for _, kv := range resp.Kvs {
		if strings.Contains(string(kv.Key), "/locks/") {
			continue
		}
		got[string(kv.Key)] = string(kv.Value)
		if leased := kv.Lease != 0; leased != (string(kv.Key) == ref.Key) {
			t.Errorf("%s: lease %x; only the node's reference is on the session lease", kv.Key, kv.Lease)
		}
	}
	if len(got) != 2 || got[master.Key] != master.Value || got[ref.Key] != ref.Value {
		t.Errorf("etcd holds %v, want %s => %s and %s => %s", got, master.Key, master.Value, ref.Key, ref.Value)
	}
}

// readCiliumDump reads `key => value` lines.
func readCiliumDump(t *testing.T, path string) [][2]string {
	t.Helper()
	f, err := os.Open(path)
	must(t, err)
	defer f.Close()
	var out [][2]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, " => ")
		if !ok {
			t.Fatalf("%s: bad line %q", path, line)
		}
		out = append(out, [2]string{k, v})
	}
	must(t, sc.Err())
	return out
}

// TestCiliumWrittenIdentities: identities a Cilium agent wrote are read
// with their exact labels, and allocating the same labels here reuses
// Cilium's id and adds this node's reference next to Cilium's.
func TestCiliumWrittenIdentities(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	raw := srv.Client()
	for _, kv := range readCiliumDump(t, filepath.Join("testdata", "cilium-etcd.txt")) {
		if _, err := raw.Put(ctxFor(t), kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	a := startAgent(t, agentConfig{srv: srv, ip: "172.18.0.4"})
	checkout := a.alloc.LookupIdentityByID(31017)
	if checkout == nil {
		t.Fatal("identity 31017 written by Cilium is unknown")
	}
	want := []string{"k8s:app.kubernetes.io/name=checkout", "k8s:io.cilium.k8s.namespace.labels.kubernetes.io/metadata.name=shop",
		"k8s:io.cilium.k8s.policy.cluster=default", "k8s:io.cilium.k8s.policy.serviceaccount=default",
		"k8s:io.kubernetes.pod.namespace=shop", "k8s:tier"}
	if got := identitycell.ToModel(checkout).Labels; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("labels of 31017 = %q, want %q", got, want)
	}
	// The endpoint's labels, without the cluster label the agent adds.
	lbls := labels.FromSlice([]labels.Label{
		labels.New(labels.SourceK8s, labels.KeyPodNamespace, "kube-system"),
		labels.New(labels.SourceK8s, "k8s-app", "kube-dns"),
		labels.New(labels.SourceK8s, labels.KeyServiceAccount, "coredns"),
		labels.New(labels.SourceK8s, labels.PrefixNamespaceLabels+".kubernetes.io/metadata.name", "kube-system"),
	})
	id, isNew, err := a.alloc.AllocateIdentity(ctxFor(t), lbls)
	if err != nil || id.ID != 20528 || isNew {
		t.Fatalf("allocation of Cilium's labels = %v (new %v, %v), want 20528", id, isNew, err)
	}
	ciliumRef := "cilium/state/identities/v1/value/k8s:io.cilium.k8s.namespace.labels.kubernetes.io/metadata.name=kube-system;k8s:io.cilium.k8s.policy.cluster=default;k8s:io.cilium.k8s.policy.serviceaccount=coredns;k8s:io.kubernetes.pod.namespace=kube-system;k8s:k8s-app=kube-dns;/"
	if get(t, srv, ciliumRef+"172.18.0.4") != "20528" || get(t, srv, ciliumRef+"172.18.0.3") != "20528" {
		t.Error("this node's reference is not next to Cilium's")
	}
}

func TestDecodeKVStoreIdentity(t *testing.T) {
	cfg := cluster.DefaultInfo
	for _, tc := range []struct {
		name    string
		id      uint64
		value   string
		wantErr error
		want    string
	}{
		{"cilium value", 300, "k8s:app=web;k8s:io.kubernetes.pod.namespace=default;", nil, "k8s:app=web,k8s:io.kubernetes.pod.namespace=default"},
		{"no trailing ';'", 300, "k8s:app=web", nil, "k8s:app=web"},
		{"json", 300, `{"labels":["k8s:app=web"]}`, identitycache.ErrMalformed, ""},
		{"empty key", 300, "k8s:=web;", identitycache.ErrMalformed, ""},
		{"white space", 300, "k8s:app=web server;", identitycache.ErrMalformed, ""},
		{"only separators", 300, ";;", identitycache.ErrMalformed, ""},
		{"reserved id", 10, "k8s:app=web;", identitycache.ErrRefused, ""},
		{"other cluster's id", 70000, "k8s:app=web;", identitycache.ErrRefused, ""},
		{"beyond 32 bits", 1 << 40, "k8s:app=web;", identitycache.ErrRefused, ""},
		{"other cluster's labels", 300, "k8s:app=web;k8s:io.cilium.k8s.policy.cluster=prod;", identitycache.ErrRefused, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, err := identitycache.DecodeKVStoreIdentity(cfg, tc.id, tc.value)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Errorf("error = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil || id.Labels.String() != tc.want || uint64(id.ID) != tc.id {
				t.Errorf("= %v, %v; want %d %s", id, err, tc.id, tc.want)
			}
		})
	}
}
