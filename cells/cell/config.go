package cell

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/spf13/pflag"
	"go.uber.org/dig"
)

// Flagger is implemented by configuration structs: Flags registers one
// flag per exported field, with the receiver's values as defaults.
type Flagger interface {
	Flags(flags *pflag.FlagSet)
}

// Validator is optionally implemented by configuration structs. Validate
// runs after the values are parsed; its error should name the flag.
type Validator interface {
	Validate() error
}

// Config registers the flags of a configuration struct and provides the
// parsed struct to the hive. Field FooBar is read from flag --foo-bar (a
// `flag:"name"` tag overrides the name). The mapping is strict: a flag
// without a field or a field without a flag is an error at populate.
//
// Values come, highest first, from the command line, the environment
// (APIARY_FOO_BAR), the --config-dir directory (a file named foo-bar) and
// the defaults in def.
func Config[T Flagger](def T) Cell {
	return &config[T]{def: def}
}

// ConfigOverride changes a configuration after it has been parsed and
// before it is validated. Tests use it through celltest.
func ConfigOverride[T Flagger](fn func(*T)) Cell {
	return &configOverride[T]{fn: fn}
}

type config[T Flagger] struct {
	def T
}

// fieldFlag binds a struct field (by index) to a flag name.
type fieldFlag struct {
	field int
	flag  string
}

func (c *config[T]) Apply(s *Scope) error {
	t := reflect.TypeFor[T]()
	owner := "config " + t.String()
	if t.Kind() != reflect.Struct {
		return fmt.Errorf("%s: not a struct", owner)
	}
	if s.root.configTypes[t] {
		return fmt.Errorf("%s: registered twice", owner)
	}
	s.root.configTypes[t] = true

	fs := pflag.NewFlagSet(t.String(), pflag.ContinueOnError)
	c.def.Flags(fs)
	mapping, err := mapFieldsToFlags(t, fs)
	if err != nil {
		return fmt.Errorf("%s: %w", owner, err)
	}
	// Decode the defaults once now: unsupported field types fail here, at
	// populate, and not when the agent first reads the config.
	if _, err := decodeConfig[T](c.def, fs, mapping); err != nil {
		return fmt.Errorf("%s: defaults: %w", owner, err)
	}
	if err := s.root.addFlags(owner, fs); err != nil {
		return err
	}
	root := s.root
	ctor := func() (T, error) {
		cfg, err := decodeConfig[T](c.def, root.flags, mapping)
		if err != nil {
			return cfg, &ConfigError{Err: err}
		}
		for _, o := range root.overrides[t] {
			o.(func(*T))(&cfg)
		}
		if v, ok := any(&cfg).(Validator); ok {
			if err := v.Validate(); err != nil {
				return cfg, &ConfigError{Err: err}
			}
		}
		return cfg, nil
	}
	if err := s.dig.Provide(ctor, dig.Export(true)); err != nil {
		return fmt.Errorf("%s: %w", owner, err)
	}
	// Every config is decoded and validated at populate, whether or not
	// a constructor asks for it: a bad value stops the agent even when
	// nothing would read it yet.
	scope := s.dig
	root.configChecks = append(root.configChecks, func() error { return scope.Invoke(func(T) {}) })
	return nil
}

// ConfigError is a flag, environment variable or config-dir value that
// does not decode or validate; it names the flag.
type ConfigError struct{ Err error }

// Error returns "invalid configuration: <problem>".
func (e *ConfigError) Error() string { return "invalid configuration: " + e.Err.Error() }

// Unwrap returns the problem.
func (e *ConfigError) Unwrap() error { return e.Err }

func (c *config[T]) Info(s *Scope) *InfoNode {
	t := reflect.TypeFor[T]()
	fs := pflag.NewFlagSet("", pflag.ContinueOnError)
	c.def.Flags(fs)
	n := &InfoNode{Header: "config " + t.String()}
	fs.VisitAll(func(f *pflag.Flag) {
		value := f.Value.String()
		if s.root.flags != nil {
			if hf := s.root.flags.Lookup(f.Name); hf != nil {
				value = hf.Value.String()
			}
		}
		line := fmt.Sprintf("--%s=%s", f.Name, value)
		if src := s.root.flagSource(f.Name); src != "" {
			line += " (" + src + ")"
		}
		n.Lines = append(n.Lines, line)
	})
	return n
}

type configOverride[T Flagger] struct {
	fn func(*T)
}

func (o *configOverride[T]) Apply(s *Scope) error {
	t := reflect.TypeFor[T]()
	s.root.overrides[t] = append(s.root.overrides[t], o.fn)
	return nil
}

func (o *configOverride[T]) Info(*Scope) *InfoNode {
	return &InfoNode{Header: "config override " + reflect.TypeFor[T]().String()}
}

// mapFieldsToFlags pairs every exported field with a flag, both ways.
func mapFieldsToFlags(t reflect.Type, fs *pflag.FlagSet) ([]fieldFlag, error) {
	byKey := map[string]string{}
	fs.VisitAll(func(f *pflag.Flag) { byKey[flagKey(f.Name)] = f.Name })

	var errs []error
	var mapping []fieldFlag
	used := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		want := flagKey(f.Name)
		if tag, ok := f.Tag.Lookup("flag"); ok {
			want = flagKey(tag)
		}
		name, ok := byKey[want]
		if !ok {
			errs = append(errs, fmt.Errorf("field %s has no flag --%s", f.Name, kebab(f.Name)))
			continue
		}
		used[name] = true
		mapping = append(mapping, fieldFlag{field: i, flag: name})
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if !used[f.Name] {
			errs = append(errs, fmt.Errorf("flag --%s has no field %s", f.Name, fieldName(f.Name)))
		}
	})
	return mapping, errors.Join(errs...)
}

// flagKey normalises a flag or field name for matching: "foo-bar",
// "FooBar" and "foo_bar" all become "foobar".
func flagKey(s string) string {
	s = strings.ReplaceAll(s, "-", "")
	s = strings.ReplaceAll(s, "_", "")
	return strings.ToLower(s)
}

// kebab turns a field name into the flag name it expects: FooBar -> foo-bar.
func kebab(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		upper := r >= 'A' && r <= 'Z'
		if upper && i > 0 {
			prevLower := rs[i-1] >= 'a' && rs[i-1] <= 'z'
			nextLower := i+1 < len(rs) && rs[i+1] >= 'a' && rs[i+1] <= 'z'
			if prevLower || nextLower && rs[i-1] >= 'A' && rs[i-1] <= 'Z' {
				b.WriteByte('-')
			}
		}
		b.WriteString(strings.ToLower(string(r)))
	}
	return b.String()
}

// fieldName turns a flag name into the field name it expects: foo-bar -> FooBar.
func fieldName(flag string) string {
	parts := strings.FieldsFunc(flag, func(r rune) bool { return r == '-' || r == '_' })
	for i, p := range parts {
		parts[i] = strings.ToUpper(p[:1]) + p[1:]
	}
	return strings.Join(parts, "")
}
