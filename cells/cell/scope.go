package cell

import (
	"fmt"
	"log/slog"
	"reflect"

	"github.com/spf13/pflag"
	"go.uber.org/dig"
)

// Scope is what a cell is applied to: a dig scope (the root container or a
// module's scope) plus the hive-wide registry of flags, invokes and
// modules. Package hive creates the root scope; cells never create one.
type Scope struct {
	dig    digScope
	root   *Root
	module FullModuleID
	// local is set in a module that has no dig scope of its own (see
	// module_local.go): dig is then the enclosing scope's.
	local *moduleLocals
}

// Root is the hive-wide state shared by all scopes of one hive.
type Root struct {
	flags          *pflag.FlagSet
	flagOwners     map[string]string
	invokes        []*Invoker
	modules        []ModuleInfo
	modulePrivate  []any
	overrides      map[reflect.Type][]any
	configTypes    map[reflect.Type]bool
	configChecks   []func() error
	applyFinished  bool
	flagSourceFunc func(name string) string
	logger         func() *slog.Logger
	health         func() Health
}

// ModuleInfo describes one module of the hive.
type ModuleInfo struct {
	ID    FullModuleID
	Title string
}

// RootOptions configure NewRootScope.
type RootOptions struct {
	// ModulePrivateProviders are provided privately in every module
	// scope, e.g. the per-module job group.
	ModulePrivateProviders []any
	// Logger returns the hive's base logger; module loggers are derived
	// from it (so nested modules carry one module attribute, the full id).
	Logger func() *slog.Logger
	// Health returns the root of the hive's health tree; module health
	// scopes are made from it by full module id.
	Health func() Health
}

// NewRootScope creates the root scope of a hive around a dig container.
// It is meant for package hive.
func NewRootScope(c *dig.Container, flags *pflag.FlagSet, opts RootOptions) *Scope {
	return &Scope{
		dig: c,
		root: &Root{
			flags:         flags,
			flagOwners:    map[string]string{},
			overrides:     map[reflect.Type][]any{},
			configTypes:   map[reflect.Type]bool{},
			modulePrivate: opts.ModulePrivateProviders,
			logger:        opts.Logger,
			health:        opts.Health,
		},
	}
}

// Root returns the hive-wide registry of this scope.
func (s *Scope) Root() *Root { return s.root }

// ModuleID returns the full ID of the module this scope belongs to (empty
// for the root scope).
func (s *Scope) ModuleID() FullModuleID { return s.module }

// Provide registers a constructor in this scope.
func (s *Scope) Provide(ctor any, opts ...dig.ProvideOption) error {
	return s.dig.Provide(ctor, opts...)
}

// Invoke runs fn in this scope right away. Cells use the Invoke cell
// instead, which runs at populate.
func (s *Scope) Invoke(fn any, opts ...dig.InvokeOption) error {
	return s.dig.Invoke(fn, opts...)
}

// Decorate registers a decorator in this scope.
func (s *Scope) Decorate(fn any, opts ...dig.DecorateOption) error {
	return s.dig.Decorate(fn, opts...)
}

// child creates a module scope below s.
func (s *Scope) child(id string) *Scope {
	return &Scope{
		dig:    s.dig.Scope(id),
		root:   s.root,
		module: s.module.Append(id),
	}
}

// Flags is the hive-wide flag set: every Config cell adds its flags here.
func (r *Root) Flags() *pflag.FlagSet { return r.flags }

// Invokes returns the invokes in declaration order.
func (r *Root) Invokes() []*Invoker { return r.invokes }

// CheckConfigs decodes and validates every registered config, in
// registration order, and returns the first error.
func (r *Root) CheckConfigs() error {
	for _, check := range r.configChecks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// Modules returns the modules in declaration order.
func (r *Root) Modules() []ModuleInfo { return r.modules }

// SetFlagSource sets how Print learns where a flag's value came from
// (command line, environment, config dir or default).
func (r *Root) SetFlagSource(f func(name string) string) { r.flagSourceFunc = f }

func (r *Root) flagSource(name string) string {
	if r.flagSourceFunc == nil {
		return ""
	}
	return r.flagSourceFunc(name)
}

// addFlags merges a config's flags into the hive flag set, refusing a flag
// that another config already registered.
func (r *Root) addFlags(owner string, fs *pflag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if err != nil {
			return
		}
		if prev, ok := r.flagOwners[f.Name]; ok {
			err = fmt.Errorf("flag --%s is registered by both %s and %s", f.Name, prev, owner)
			return
		}
		if r.flags.Lookup(f.Name) != nil {
			err = fmt.Errorf("flag --%s of %s is already registered by the hive", f.Name, owner)
			return
		}
		r.flagOwners[f.Name] = owner
		r.flags.AddFlag(f)
	})
	return err
}
