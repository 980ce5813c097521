package policycell

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"sort"
	"sync"

	"github.com/apiary-net/apiary/cells/status"

	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// Labels the importer adds to every rule, saying where it was loaded from
// (source apiary): "apiary:io.apiary.policy.source=api" or "=file", and
// for files "apiary:io.apiary.policy.file=<name>".
const (
	SourceApiary      = "apiary"
	LabelPolicySource = "io.apiary.policy.source"
	LabelPolicyFile   = "io.apiary.policy.file"
	PolicySourceAPI   = "api"
	PolicySourceFile  = "file"
)

// apiSourceLabel marks rules imported through the REST API.
var apiSourceLabel = labels.New(SourceApiary, LabelPolicySource, PolicySourceAPI)

// fileLabels are the labels of the rules of one file of --policy-dir.
func fileLabels(name string) labels.Labels {
	return labels.FromSlice([]labels.Label{
		labels.New(SourceApiary, LabelPolicySource, PolicySourceFile),
		labels.New(SourceApiary, LabelPolicyFile, name),
	})
}

// importer applies policies from every source to the repository, keeps a
// CIDR identity for every prefix the rules mention and requests endpoint
// regeneration after each change.
type importer struct {
	repo  *policy.Repository
	alloc identity.Allocator
	opts  policyapi.Options
	log   *slog.Logger
	regen *regenerations

	mu    sync.Mutex // serializes changes and the CIDR identities
	cidrs map[netip.Prefix]*identity.Identity
	ipc   ipcache.IPCache // nil without the ipcache cell
	files fileStates
	store *apiStore // keeps the API-imported policies; nil without a state dir
	k8s   *k8sObjects
	warns *policyWarnings
	// status refreshes the Policy line after a change (nil: none).
	status status.Refresher
}

func newImporter(repo *policy.Repository, alloc identity.Allocator, opts policyapi.Options, log *slog.Logger) *importer {
	return &importer{
		repo: repo, alloc: alloc, opts: opts, log: log,
		regen: newRegenerations(log),
		cidrs: make(map[netip.Prefix]*identity.Identity),
		files: fileStates{},
		k8s:   newK8sObjects(),
		warns: newPolicyWarnings(),
	}
}

// parse parses documents named name and logs their warnings; it stops
// when ctx ends.
func (l *importer) parse(ctx context.Context, name string, data []byte) ([]*policyapi.Policy, error) {
	pols, err := policyapi.ParseDocumentsContext(ctx, name, data, l.opts)
	for _, p := range pols {
		for _, w := range p.Warnings {
			l.log.Warn("Policy accepted with a warning", "warning", w.String())
		}
	}
	return pols, err
}

// importAPI replaces the API-imported policies with the same origins as
// pols (parsed from doc) by pols, in one revision; with a state dir, the
// change is kept there first.
func (l *importer) importAPI(ctx context.Context, doc []byte, pols []*policyapi.Policy) (uint64, error) {
	origins := make([]labels.Labels, 0, len(pols))
	var rules []*policyapi.Rule
	for _, p := range pols {
		origins = append(origins, p.Labels.With(apiSourceLabel))
		for _, r := range p.Rules {
			r.Labels = r.Labels.With(apiSourceLabel)
			rules = append(rules, r)
		}
	}
	gone := func(r *policyapi.Rule) bool {
		return slices.ContainsFunc(origins, func(o labels.Labels) bool { return len(o) > 0 && r.Labels.HasAll(o) })
	}
	rev, err := l.changeKept(ctx, "api import", gone, func() *storedImport { return newImport(doc, pols) },
		func() uint64 { return l.repo.ReplaceMatchingAny(origins, rules...) })
	if rev != 0 {
		l.warns.setAPI(pols...)
		l.warns.pruneAPI(l.repo.Rules())
		l.refreshStatus()
	}
	return rev, err
}

// deleteAPI deletes the rules carrying every label of sel, or every rule
// imported through the API when sel is empty.
func (l *importer) deleteAPI(ctx context.Context, sel labels.Labels) (rev uint64, deleted int, err error) {
	if len(sel) == 0 {
		sel = labels.FromSlice([]labels.Label{apiSourceLabel})
	}
	gone := func(r *policyapi.Rule) bool { return r.Labels.HasAll(sel) }
	rev, err = l.changeKept(ctx, "api delete", gone, func() *storedImport { return nil }, func() uint64 {
		var r uint64
		r, deleted = l.repo.DeleteByLabels(sel)
		return r
	})
	l.warns.pruneAPI(l.repo.Rules())
	l.refreshStatus()
	return rev, deleted, err
}

// replaceFile replaces the rules of file name by those of pols (none:
// the file is gone).
func (l *importer) replaceFile(ctx context.Context, name string, pols []*policyapi.Policy) (uint64, error) {
	l.warns.set("file "+name, pols...)
	origin := fileLabels(name)
	var rules []*policyapi.Rule
	for _, p := range pols {
		for _, r := range p.Rules {
			r.Labels = r.Labels.With(origin...)
			rules = append(rules, r)
		}
	}
	return l.change(ctx, "file "+name, func() uint64 { return l.repo.ReplaceMatchingAny([]labels.Labels{origin}, rules...) })
}

// change applies fn to the repository, syncs the CIDR identities and
// requests regeneration.
func (l *importer) change(ctx context.Context, reason string, fn func() uint64) (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changeLocked(ctx, reason, fn)
}

// changeKept is change for the API's changes: with a state dir, it first
// keeps the API-imported rules in force after the change (those in force
// that gone does not match, and add's) in the file; when that fails the
// repository is not changed. Both happen under the lock, so the file
// and the repository never disagree in a way a restart would show.
func (l *importer) changeKept(ctx context.Context, reason string, gone func(*policyapi.Rule) bool, add func() *storedImport,
	fn func() uint64) (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.store != nil {
		inForce := map[*policyapi.Rule]bool{}
		for _, r := range l.repo.Rules() {
			inForce[r] = true
		}
		if err := l.store.commit(inForce, gone, add()); err != nil {
			l.log.Error("Keeping the API-imported policies failed, the change is refused", "change", reason, "error", err)
			return 0, fmt.Errorf("keep API-imported policies: %w", err)
		}
	}
	return l.changeLocked(ctx, reason, fn)
}

// changeLocked is change with l.mu held.
func (l *importer) changeLocked(ctx context.Context, reason string, fn func() uint64) (uint64, error) {
	rev := fn()
	err := l.syncCIDRIdentitiesLocked(ctx)
	l.regen.Request(fmt.Sprintf("%s (revision %d)", reason, rev))
	l.refreshStatus()
	return rev, err
}

// refreshStatus has the Policy status line probed again now: its
// revision and warnings follow a change at once.
func (l *importer) refreshStatus() {
	if l.status != nil {
		l.status.Refresh()
	}
}

// syncCIDRIdentitiesLocked allocates an identity for each prefix the
// rules mention and releases those of prefixes no longer mentioned.
func (l *importer) syncCIDRIdentitiesLocked(ctx context.Context) error {
	want := make(map[netip.Prefix]bool)
	var errs []error
	for _, p := range l.repo.CIDRPrefixes() {
		want[p] = true
		if _, ok := l.cidrs[p]; ok {
			continue
		}
		id, _, err := l.alloc.AllocateIdentity(ctx, identity.CIDRLabels(p))
		if err != nil {
			errs = append(errs, fmt.Errorf("allocate identity of %s: %w", p, err))
			continue
		}
		l.cidrs[p] = id
		if err := l.publishCIDRLocked(p, id); err != nil {
			errs = append(errs, err)
		}
	}
	for p, id := range l.cidrs {
		if want[p] {
			continue
		}
		if err := l.withdrawCIDRLocked(p); err != nil {
			errs = append(errs, err)
		}
		if _, err := l.alloc.Release(ctx, id); err != nil {
			errs = append(errs, fmt.Errorf("release identity of %s: %w", p, err))
			continue
		}
		delete(l.cidrs, p)
	}
	if len(errs) > 0 {
		err := errors.Join(errs...)
		l.log.Error("Syncing CIDR identities of policy prefixes", "error", err)
		return err
	}
	return nil
}

// releaseAll releases every CIDR identity (stop hook).
func (l *importer) releaseAll(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	for p, id := range l.cidrs {
		if _, err := l.alloc.Release(ctx, id); err != nil {
			errs = append(errs, fmt.Errorf("release identity of %s: %w", p, err))
		}
		delete(l.cidrs, p)
	}
	return errors.Join(errs...)
}

// cidrPrefixes returns the prefixes holding an identity, sorted.
func (l *importer) cidrPrefixes() []netip.Prefix {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]netip.Prefix, 0, len(l.cidrs))
	for p := range l.cidrs {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return policy.ComparePrefixes(out[i], out[j]) < 0 })
	return out
}
