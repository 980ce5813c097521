package labels

import (
	"fmt"
	"regexp"
	"strings"
)

// Filter splits labels into identity-relevant ones and the rest, the way
// Cilium's --labels option does. Each prefix is a regular expression
// matched at the start of the key, optionally limited to a source
// ("k8s:app") and inverted with '!' ("!k8s:tier"). A label is identity
// relevant when the longest matching include is longer than the shortest
// matching exclude; when the user gives any include, labels that match no
// include are dropped.
type Filter struct {
	prefixes  []labelPrefix
	whitelist bool
}

type labelPrefix struct {
	text   string
	source string
	ignore bool
	expr   *regexp.Regexp
}

// defaultPrefixes are Cilium's defaults: keep reserved labels, the
// namespace and its labels, app.kubernetes.io and the cluster; drop other
// Kubernetes-managed and per-pod labels that would make every pod an
// identity of its own.
var defaultPrefixes = []string{
	"reserved:.*",
	regexp.QuoteMeta(KeyPodNamespace),
	regexp.QuoteMeta(PrefixNamespaceLabels),
	regexp.QuoteMeta("app.kubernetes.io"),
	regexp.QuoteMeta(KeyPolicyCluster),
	`!io\.kubernetes`,
	`!kubernetes\.io`,
	"!" + regexp.QuoteMeta("statefulset.kubernetes.io/pod-name"),
	"!" + regexp.QuoteMeta("apps.kubernetes.io/pod-index"),
	"!" + regexp.QuoteMeta("batch.kubernetes.io/job-completion-index"),
	`!.*beta\.kubernetes\.io`,
	`!k8s\.io`,
	`!pod-template-generation`,
	`!pod-template-hash`,
	`!controller-revision-hash`,
	`!annotation.*`,
	`!etcd_node`,
}

// NewFilter returns the default filter extended with the user's prefixes
// (the --labels flag).
func NewFilter(user []string) (*Filter, error) {
	f := &Filter{}
	for _, p := range defaultPrefixes {
		lp, err := parsePrefix(p)
		if err != nil {
			panic(fmt.Sprintf("labels: default prefix %q: %v", p, err))
		}
		f.prefixes = append(f.prefixes, lp)
	}
	for _, p := range user {
		if strings.TrimSpace(p) == "" {
			continue
		}
		lp, err := parsePrefix(p)
		if err != nil {
			return nil, fmt.Errorf("--labels: %w", err)
		}
		if !lp.ignore {
			f.whitelist = true
		}
		f.prefixes = append(f.prefixes, lp)
	}
	return f, nil
}

// DefaultFilter returns the filter with Cilium's default prefixes.
func DefaultFilter() *Filter {
	f, _ := NewFilter(nil)
	return f
}

func parsePrefix(s string) (labelPrefix, error) {
	lp := labelPrefix{text: s}
	rest := s
	if i := strings.IndexByte(s, ':'); i >= 0 {
		lp.source, rest = s[:i], s[i+1:]
	}
	if strings.HasPrefix(rest, "!") {
		lp.ignore, rest = true, rest[1:]
	} else if strings.HasPrefix(lp.source, "!") {
		lp.ignore, lp.source = true, lp.source[1:]
	}
	if rest == "" {
		return lp, fmt.Errorf("label prefix %q: empty expression", s)
	}
	expr, err := regexp.Compile(rest)
	if err != nil {
		return lp, fmt.Errorf("label prefix %q: %w", s, err)
	}
	lp.expr = expr
	return lp, nil
}

// match returns whether p matches l at the start of the key, and the
// length of the match.
func (p labelPrefix) match(l Label) (bool, int) {
	if p.source != "" && p.source != l.Source {
		return false, 0
	}
	loc := p.expr.FindStringIndex(l.Key)
	if loc == nil || loc[0] != 0 {
		return false, 0
	}
	return true, loc[1]
}

// Filter splits ls into identity-relevant and informational labels.
func (f *Filter) Filter(ls Labels) (identity, info Labels) {
	for _, l := range ls {
		included, ignored := 0, 0
		for _, p := range f.prefixes {
			ok, n := p.match(l)
			switch {
			case !ok:
			case p.ignore && (ignored == 0 || n < ignored):
				ignored = n
			case !p.ignore && n > included:
				included = n
			}
		}
		if (!f.whitelist && ignored == 0) || included > ignored {
			identity = append(identity, l)
		} else {
			info = append(info, l)
		}
	}
	return identity, info
}
