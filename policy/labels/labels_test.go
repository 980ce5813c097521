package labels_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/policy/labels"
)

func TestParseAndFormat(t *testing.T) {
	for _, tc := range []struct {
		give, want, src, key, value string
	}{
		{give: "k8s:app=web", want: "k8s:app=web", src: "k8s", key: "app", value: "web"},
		{give: "reserved:host", want: "reserved:host", src: "reserved", key: "host"},
		{give: "cidr:10.0.0.0/8", want: "cidr:10.0.0.0/8", src: "cidr", key: "10.0.0.0/8"},
		{give: "cidr:2001:db8::/32", want: "cidr:2001:db8::/32", src: "cidr", key: "2001:db8::/32"},
		{give: "app=web", want: "any:app=web", src: "any", key: "app", value: "web"},
		{give: "k8s:io.kubernetes.pod.namespace=default", want: "k8s:io.kubernetes.pod.namespace=default", src: "k8s", key: "io.kubernetes.pod.namespace", value: "default"},
		{give: "k8s:url=http://x", want: "k8s:url=http://x", src: "k8s", key: "url", value: "http://x"},
	} {
		t.Run(tc.give, func(t *testing.T) {
			l, err := labels.Parse(tc.give, labels.SourceAny)
			if err != nil {
				t.Fatal(err)
			}
			if l.Source != tc.src || l.Key != tc.key || l.Value != tc.value || l.String() != tc.want {
				t.Errorf("Parse = %+v (%s), want %s/%s/%s (%s)", l, l, tc.src, tc.key, tc.value, tc.want)
			}
		})
	}
	for _, bad := range []string{"", ":x", "k8s:", "=v"} {
		if _, err := labels.Parse(bad, ""); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
}

func TestSortedListIsCanonical(t *testing.T) {
	a := labels.FromMap("k8s", map[string]string{"io.kubernetes.pod.namespace": "default", "app": "web", "tier": ""})
	b, _ := labels.ParseList("", "k8s:tier=", "k8s:app=web", "k8s:io.kubernetes.pod.namespace=default")
	want := "k8s:app=web;k8s:io.kubernetes.pod.namespace=default;k8s:tier=;"
	if a.SortedList() != want || b.SortedList() != want {
		t.Errorf("SortedList = %q / %q, want %q", a.SortedList(), b.SortedList(), want)
	}
	back, err := labels.ParseSortedList(want)
	if err != nil || !back.Equal(a) {
		t.Errorf("ParseSortedList = %v, %v; want %v", back, err, a)
	}
	if _, err := labels.ParseSortedList(";;"); err == nil {
		t.Error("an empty list parsed")
	}
}

// TestParseSortedListOutOfOrder: a list out of key order or with a key
// twice (not as writers put it) is sorted, the last label of a key
// winning, as FromSlice does.
func TestParseSortedListOutOfOrder(t *testing.T) {
	for _, tt := range []struct{ name, give, want string }{
		{"canonical", "k8s:a=1;k8s:b=2;", "k8s:a=1;k8s:b=2;"},
		{"no trailing separator", "k8s:a=1;k8s:b=2", "k8s:a=1;k8s:b=2;"},
		{"out of order", "k8s:b=2;k8s:a=1;", "k8s:a=1;k8s:b=2;"},
		{"key twice", "k8s:a=1;k8s:a=3;k8s:b=2;", "k8s:a=3;k8s:b=2;"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := labels.ParseSortedList(tt.give)
			if err != nil || got.SortedList() != tt.want {
				t.Errorf("ParseSortedList(%q) = %q, %v; want %q", tt.give, got.SortedList(), err, tt.want)
			}
		})
	}
}

func TestHasMatchesSource(t *testing.T) {
	ls := labels.MustParseList("k8s:app=web", "k8s:tier=db")
	if !ls.Has(labels.MustParse("app=web")) || !ls.Has(labels.MustParse("k8s:app=web")) {
		t.Error("any-source and same-source selectors should match")
	}
	if ls.Has(labels.MustParse("container:app=web")) || ls.Has(labels.MustParse("k8s:app=api")) {
		t.Error("other source or value should not match")
	}
}

func TestDefaultFilter(t *testing.T) {
	in := labels.FromSlice([]labels.Label{
		labels.New("k8s", "app", "web"),
		labels.New("k8s", "io.kubernetes.pod.namespace", "default"),
		labels.New("k8s", "io.cilium.k8s.policy.cluster", "c1"),
		labels.New("k8s", "io.cilium.k8s.namespace.labels.team", "a"),
		labels.New("k8s", "app.kubernetes.io/name", "web"),
		labels.New("k8s", "pod-template-hash", "7c9f8d6b5"),
		labels.New("k8s", "controller-revision-hash", "abc"),
		labels.New("k8s", "statefulset.kubernetes.io/pod-name", "db-0"),
		labels.New("k8s", "kubernetes.io/hostname", "node1"),
		labels.New("k8s", "io.kubernetes.container.name", "x"),
		labels.New("k8s", "topology.beta.kubernetes.io/zone", "z"),
		labels.New("reserved", "host", ""),
	})
	id, info := labels.DefaultFilter().Filter(in)
	wantID := "k8s:app=web,k8s:app.kubernetes.io/name=web,reserved:host,k8s:io.cilium.k8s.namespace.labels.team=a,k8s:io.cilium.k8s.policy.cluster=c1,k8s:io.kubernetes.pod.namespace=default"
	if got := labels.FromSlice(id).String(); got != labels.FromSlice(mustList(t, wantID)).String() {
		t.Errorf("identity labels = %s\nwant %s", got, labels.FromSlice(mustList(t, wantID)))
	}
	if len(info) != 6 {
		t.Errorf("info labels = %s, want the 6 excluded ones", labels.Labels(info))
	}
}

func mustList(t *testing.T, s string) []labels.Label {
	ls, err := labels.ParseList("", strings.Split(s, ",")...)
	if err != nil {
		t.Fatal(err)
	}
	return ls
}

func TestUserFilter(t *testing.T) {
	f, err := labels.NewFilter([]string{"k8s:app", "!k8s:app.internal"})
	if err != nil {
		t.Fatal(err)
	}
	in := labels.MustParseList("k8s:app=web", "k8s:app.internal=x", "k8s:tier=db", "k8s:io.kubernetes.pod.namespace=ns")
	id, _ := f.Filter(in)
	// With an include given, labels must match one: tier is dropped; the
	// namespace still matches its default include.
	if got := labels.Labels(id).String(); got != "k8s:app=web,k8s:io.kubernetes.pod.namespace=ns" {
		t.Errorf("identity labels = %s", got)
	}
	if _, err := labels.NewFilter([]string{"k8s:(["}); err == nil || !strings.Contains(err.Error(), "--labels") {
		t.Errorf("bad regexp error = %v, want it to name --labels", err)
	}
}

func TestCIDRKey(t *testing.T) {
	for _, tc := range []struct{ give, want string }{
		{"10.0.0.0/8", "10.0.0.0/8"},
		{"10.1.2.3/8", "10.0.0.0/8"},
		{"0.0.0.0/0", "0.0.0.0/0"},
		{"192.0.2.1/32", "192.0.2.1/32"},
		{"2001:db8::/32", "2001-db8--0/32"},
		{"2001:db8::1/128", "2001-db8--1/128"},
		{"::/0", "0--0/0"},
		{"::1/128", "0--1/128"},
		{"f00d::a0f:0:0:1/128", "f00d--a0f-0-0-1/128"},
	} {
		p := netip.MustParsePrefix(tc.give)
		if got := labels.CIDRKey(p); got != tc.want {
			t.Errorf("CIDRKey(%s) = %q, want %q", tc.give, got, tc.want)
		}
		for _, key := range []string{tc.want, p.Masked().String()} {
			if back, err := labels.ParseCIDRKey(key); err != nil || back != p.Masked() {
				t.Errorf("ParseCIDRKey(%q) = %v, %v; want %s", key, back, err, p.Masked())
			}
		}
	}
	for _, bad := range []string{"", "10.0.0.0", "10.0.0.0/33", "fe80::1%eth0/64", "2001-db8-/32", "web"} {
		if p, err := labels.ParseCIDRKey(bad); err == nil {
			t.Errorf("ParseCIDRKey(%q) = %s, want an error", bad, p)
		}
	}
}
