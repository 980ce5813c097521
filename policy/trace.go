package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/models"
	papi "github.com/apiary-net/apiary/policy/api"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
)

// newTraceHandler serves POST /v1/policy/trace (`apiary policy trace`).
func newTraceHandler(l *loader) api.HandlerOut {
	return api.NewHandlerOut(http.MethodPost, "/v1/policy/trace", func(w http.ResponseWriter, r *http.Request) {
		var req models.PolicyTraceRequest
		if err := decodeJSON(r, &req); err != nil {
			api.WriteError(w, http.StatusBadRequest, err)
			return
		}
		q, err := l.parseTrace(req)
		if err != nil {
			api.WriteError(w, http.StatusBadRequest, err)
			return
		}
		out, err := l.trace(r.Context(), q)
		if err != nil {
			api.WriteError(w, http.StatusInternalServerError, err)
			return
		}
		api.WriteJSON(w, http.StatusOK, out)
	})
}

// traceQuery is a parsed trace request.
type traceQuery struct {
	src, dst labels.Labels
	proto    papi.Protocol
	port     uint16
	dport    string
}

// parseTrace reads the label lists and the port. Labels default to
// source k8s; "ns:<name>" is the namespace label; every set gets the
// local cluster label, as endpoints do.
func (l *loader) parseTrace(req models.PolicyTraceRequest) (traceQuery, error) {
	var q traceQuery
	var err error
	if q.src, err = l.traceLabels("source", req.Source); err != nil {
		return q, err
	}
	if q.dst, err = l.traceLabels("destination", req.Destination); err != nil {
		return q, err
	}
	q.proto, q.port, err = parseDPort(req.DPort)
	q.dport = fmt.Sprintf("%d/%s", q.port, q.proto)
	return q, err
}

func (l *loader) traceLabels(what string, ss []string) (labels.Labels, error) {
	if len(ss) == 0 {
		return nil, fmt.Errorf("%s: no labels", what)
	}
	list := make([]string, 0, len(ss))
	for _, s := range ss {
		if ns, ok := strings.CutPrefix(s, "ns:"); ok {
			s = labels.SourceK8s + ":" + labels.KeyPodNamespace + "=" + ns
		}
		if strings.Contains(s, "/") && !strings.ContainsAny(s, ":=") {
			return nil, fmt.Errorf("%s: %q: pods by namespace/name need the endpoint manager, not there yet; give the pod's labels and ns:<namespace>", what, s)
		}
		list = append(list, s)
	}
	ls, err := labels.ParseList(labels.SourceK8s, list...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if _, ok := ls.Get(labels.KeyPolicyCluster); !ok {
		ls = ls.With(labels.New(labels.SourceK8s, labels.KeyPolicyCluster, l.opts.ClusterName))
	}
	return ls, nil
}

// parseDPort reads "6379/TCP" or "6379" (TCP).
func parseDPort(s string) (papi.Protocol, uint16, error) {
	portStr, protoStr, found := strings.Cut(s, "/")
	proto := papi.ProtoTCP
	if found {
		proto = papi.Protocol(strings.ToUpper(protoStr))
	}
	if _, ok := protoNumbers[proto]; !ok {
		return "", 0, fmt.Errorf("dport %q: protocol must be TCP, UDP or SCTP", s)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil || port == 0 {
		return "", 0, fmt.Errorf("dport %q: port must be 1..65535", s)
	}
	return proto, uint16(port), nil
}

// trace allocates identities for both label sets (released at the end),
// resolves their policies and reads the verdicts off their map states.
func (l *loader) trace(ctx context.Context, q traceQuery) (*models.PolicyTrace, error) {
	src, _, err := l.alloc.AllocateIdentity(ctx, q.src)
	if err != nil {
		return nil, fmt.Errorf("allocate source identity: %w", err)
	}
	defer func() { _, _ = l.alloc.Release(context.WithoutCancel(ctx), src) }()
	dst, _, err := l.alloc.AllocateIdentity(ctx, q.dst)
	if err != nil {
		return nil, fmt.Errorf("allocate destination identity: %w", err)
	}
	defer func() { _, _ = l.alloc.Release(context.WithoutCancel(ctx), dst) }()
	out := &models.PolicyTrace{
		Revision:    l.repo.Revision(),
		Source:      labelStrings(src.Labels),
		Destination: labelStrings(dst.Labels),
		DPort:       q.dport,
	}
	out.Egress = l.traceDirection(src, dst, Egress, q)
	out.Ingress = l.traceDirection(dst, src, Ingress, q)
	out.Allowed = out.Egress.Allowed && out.Ingress.Allowed
	return out, nil
}

// traceDirection explains the policy of subject for traffic with peer.
func (l *loader) traceDirection(subject, peer *identity.Identity, dir Direction, q traceQuery) models.PolicyTraceDirection {
	sp := l.repo.Resolve(subject)
	ep := sp.DistillPolicy(nil)
	defer ep.Detach()
	out := models.PolicyTraceDirection{
		DefaultDeny: sp.DefaultDeny(dir),
		Rules:       []models.PolicyTraceRule{},
		Allowed:     Verdict(ep.MapState(), peer.ID, dir, protoNumbers[q.proto], q.port),
	}
	for _, rule := range l.repo.Rules() {
		if !rule.Subject.Selects(subject.Labels) {
			continue
		}
		allow, deny := rule.Ingress, rule.IngressDeny
		if dir == Egress {
			allow, deny = rule.Egress, rule.EgressDeny
		}
		out.Rules = append(out.Rules, models.PolicyTraceRule{
			Policy: ruleName(rule),
			Allows: coveringEntries(allow, peer.Labels, q),
			Denies: coveringEntries(deny, peer.Labels, q),
		})
	}
	return out
}

// ruleName names a rule for people: "CiliumNetworkPolicy
// default/l4-policy spec (file l4.yaml)".
func ruleName(rule *papi.Rule) string {
	value := func(source, key string) string {
		l, ok := rule.Labels.Get(key)
		if !ok || l.Source != source {
			return ""
		}
		return l.Value
	}
	name := value(labels.SourceK8s, papi.LabelPolicyName)
	if ns := value(labels.SourceK8s, papi.LabelPolicyNamespace); ns != "" {
		name = ns + "/" + name
	}
	from := value(SourceApiary, LabelPolicySource)
	if file := value(SourceApiary, LabelPolicyFile); file != "" {
		from += " " + file
	}
	return fmt.Sprintf("%s %s %s (%s)", value(labels.SourceK8s, papi.LabelPolicyDerivedFrom), name, rule.Field, from)
}

// coveringEntries returns the fields of the entries covering traffic
// with a peer labelled ls on the query's port.
func coveringEntries(entries []papi.PeerRule, ls labels.Labels, q traceQuery) []string {
	var out []string
	for _, e := range entries {
		if peersMatch(e.Peers, ls) && portsCover(e, q) {
			out = append(out, e.Field)
		}
	}
	return out
}

func peersMatch(peers []papi.Peer, ls labels.Labels) bool {
	for _, p := range peers {
		if p.Kind == papi.PeerAny || p.Matches(ls) {
			return true
		}
	}
	return false
}

func portsCover(e papi.PeerRule, q traceQuery) bool {
	if e.IsL3Only() {
		return true
	}
	for _, pp := range e.Ports {
		if pp.Covers(q.port, q.proto) {
			return true
		}
	}
	return false
}

func labelStrings(ls labels.Labels) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.String()
	}
	return out
}

// decodeJSON decodes a request body strictly.
func decodeJSON(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, maxPolicyBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("decode request body: %w", err)
	}
	return nil
}
