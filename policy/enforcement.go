package policy

import "fmt"

// EnforcementMode is Cilium's --enable-policy: when endpoints enforce
// policy.
type EnforcementMode string

// The enforcement modes.
const (
	// EnforceDefault: a direction is enforced where a rule selects the
	// endpoint in it (or it has deny rules), as Kubernetes defines.
	EnforceDefault EnforcementMode = "default"
	// EnforceAlways: every endpoint is in default deny in both
	// directions; with no rule selecting it, everything is denied.
	EnforceAlways EnforcementMode = "always"
	// EnforceNever: policies are computed (trace, simulate, the maps),
	// but no endpoint enforces them: every flow passes.
	EnforceNever EnforcementMode = "never"
)

// ParseEnforcementMode checks a --enable-policy value ("" is default).
func ParseEnforcementMode(s string) (EnforcementMode, error) {
	switch m := EnforcementMode(s); m {
	case EnforceDefault, EnforceAlways, EnforceNever:
		return m, nil
	case "":
		return EnforceDefault, nil
	}
	return "", fmt.Errorf("--enable-policy: %q is not default, always or never", s)
}

// SetEnforcementMode sets the mode; call it before policies are
// resolved. EnforceAlways puts every resolved policy in default deny.
func (r *Repository) SetEnforcementMode(m EnforcementMode) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mode = m
}

// EnforcementMode returns the mode (EnforceDefault unless set).
func (r *Repository) EnforcementMode() EnforcementMode {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mode == "" {
		return EnforceDefault
	}
	return r.mode
}

// SetAuditMode sets --policy-audit-mode: endpoints look policy up and
// report its verdicts, but denied flows pass. Call it before endpoints
// are attached.
func (r *Repository) SetAuditMode(on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.audit = on
}

// AuditMode reports whether --policy-audit-mode is on.
func (r *Repository) AuditMode() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.audit
}
