package status

import (
	"context"
	"errors"
	"fmt"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
)

// State is the state of a subsystem.
type State = models.State

// The states a probe reports.
const (
	// Ok: the subsystem works.
	Ok = models.StateOk
	// Warning: the subsystem works, but not as it should.
	Warning = models.StateWarning
	// Failure: the subsystem does not work.
	Failure = models.StateFailure
	// Disabled: the subsystem is switched off by configuration.
	Disabled = models.StateDisabled
)

// Report is a probe's answer: a state, a one-line message and optional
// detail lines (shown with `apiary status --verbose`, or when not Ok).
type Report struct {
	State   State
	Message string
	Details []string
}

// ProbeFunc finds out the state of a subsystem. It should answer quickly
// and return when ctx is cancelled (the hive is stopping).
type ProbeFunc func(ctx context.Context) Report

// Provider is one line of `apiary status`.
type Provider struct {
	// Name names the subsystem ("State dir", "Metrics").
	Name string
	// Module is the full id of the registering module; lines are shown in
	// the order the modules are declared in the hive, then by name.
	// Constructors get it by asking for a cell.FullModuleID.
	Module cell.FullModuleID
	// Probe is called every ProbeInterval.
	Probe ProbeFunc
	// Live marks a probe that is cheap and never blocks (the Hive line:
	// it reads the health tree): it is also called on every read of the
	// status, so that the line shows the health the other probes of the
	// same round have just set, not what it was before them.
	Live bool
}

// ProviderOut provides a Provider to the status collector: return it
// from a constructor registered with cell.Provide.
type ProviderOut struct {
	cell.Out

	Provider Provider `group:"status-providers"`
}

// NewProviderOut is shorthand for a ProviderOut.
func NewProviderOut(module cell.FullModuleID, name string, probe ProbeFunc) ProviderOut {
	return ProviderOut{Provider: Provider{Name: name, Module: module, Probe: probe}}
}

// validateProviders checks (in display order, so errors are stable) that every provider has a name and a probe,
// and that no name is used twice.
func validateProviders(entries []*entry) error {
	var errs []error
	seen := map[string]Provider{}
	for _, e := range entries {
		p := e.Provider
		switch {
		case p.Name == "":
			errs = append(errs, fmt.Errorf("status provider of module %q: empty name", p.Module))
			continue
		case p.Probe == nil:
			errs = append(errs, fmt.Errorf("status provider %q of module %q: nil probe", p.Name, p.Module))
			continue
		}
		if prev, ok := seen[p.Name]; ok {
			errs = append(errs, fmt.Errorf("status provider %q: registered twice, by module %q and by module %q",
				p.Name, prev.Module, p.Module))
			continue
		}
		seen[p.Name] = p
	}
	return errors.Join(errs...)
}
