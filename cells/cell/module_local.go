package cell

import (
	"reflect"
	"sync"

	"go.uber.org/dig"
)

// A module normally gets a dig scope of its own, where the module's
// logger, health, lifecycle and ids are decorations. dig copies every
// node of the graph into every scope and every later node into all of
// them, so on a hive of many modules the scopes cost more than the rest
// of building it together.
//
// Most modules only Provide exported constructors (with configs and child
// modules). Such a module gets no dig scope: its constructors are provided
// to the nearest enclosing scope, and a constructor that takes one of the
// module's own objects is wrapped so that it receives the module's
// object, made by the same decorator a scope would use, once per module
// as dig would. What each constructor sees, and what dig reports about it,
// is unchanged: its parameters resolve from the enclosing scope, which
// differs from the module's scope only in the decorations, and dig names
// the original function.

// scopeFreer is implemented by cells that can be applied to a module that
// has no dig scope of its own.
type scopeFreer interface {
	scopeFree(l *moduleLocals) bool
}

// moduleDecorator makes one of a module's own objects from the enclosing
// scope's object of the same type.
type moduleDecorator struct {
	typ reflect.Type
	// fn is the decorator as dig takes it: func(T) T.
	fn any
	// apply calls fn on a reflect.Value of type T.
	apply func(reflect.Value) reflect.Value
}

func decorator[T any](fn func(T) T) moduleDecorator {
	return moduleDecorator{
		typ: reflect.TypeFor[T](),
		fn:  fn,
		apply: func(in reflect.Value) reflect.Value {
			v, _ := in.Interface().(T) // in is always a T; a nil interface gives the zero T
			out := fn(v)
			return reflect.ValueOf(&out).Elem()
		},
	}
}

// moduleLocals stands in for the decorations of a module without a scope.
type moduleLocals struct {
	decorators []moduleDecorator

	mu     sync.Mutex
	values []reflect.Value // by decorator; made on first use
}

func newModuleLocals(decorators []moduleDecorator) *moduleLocals {
	return &moduleLocals{decorators: decorators, values: make([]reflect.Value, len(decorators))}
}

// decoratorOf returns the index of the decorator of t, or -1 when t is
// not a per-module type.
func (l *moduleLocals) decoratorOf(t reflect.Type) int {
	for i, d := range l.decorators {
		if d.typ == t {
			return i
		}
	}
	return -1
}

// value returns the module's object made by decorator i, decorating in
// (the object of the enclosing scope) the first time, as a dig decoration
// would.
func (l *moduleLocals) value(i int, in reflect.Value) reflect.Value {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.values[i].IsValid() {
		l.values[i] = l.decorators[i].apply(in)
	}
	return l.values[i]
}

// localParam is where a constructor takes a per-module object: parameter
// arg, and within it the struct field at path (empty for the parameter
// itself).
type localParam struct {
	arg       int
	path      []int
	decorator int
}

// localParams lists where fn takes per-module objects. ok is false when
// fn cannot be wrapped faithfully: not a function, variadic, or a per-module
// type in a cell.In field that is named, grouped or unexported.
func (l *moduleLocals) localParams(fn any) (params []localParam, ok bool) {
	t := reflect.TypeOf(fn)
	if t == nil || t.Kind() != reflect.Func || t.IsVariadic() {
		return nil, false
	}
	for i := range t.NumIn() {
		in := t.In(i)
		if d := l.decoratorOf(in); d >= 0 {
			params = append(params, localParam{arg: i, decorator: d})
			continue
		}
		if !embeds(in, inType) {
			continue
		}
		if !l.localFields(in, nil, func(path []int, d int) {
			params = append(params, localParam{arg: i, path: path, decorator: d})
		}) {
			return nil, false
		}
	}
	return params, true
}

// localFields calls add for each field of the cell.In struct t (nested
// cell.In structs included) whose type is a per-module type. It returns
// false for such a field that dig would not fill with the decorated
// object, or that cannot be set.
func (l *moduleLocals) localFields(t reflect.Type, prefix []int, add func(path []int, decorator int)) bool {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type == inType {
			continue
		}
		d := l.decoratorOf(f.Type)
		local := d >= 0
		nested := embeds(f.Type, inType)
		if !local && !nested {
			continue
		}
		path := append(append([]int(nil), prefix...), i)
		if !f.IsExported() || hasTag(f, "name") || hasTag(f, "group") {
			return false
		}
		if local {
			add(path, d)
			continue
		}
		if !l.localFields(f.Type, path, add) {
			return false
		}
	}
	return true
}

func hasTag(f reflect.StructField, tag string) bool {
	_, ok := f.Tag.Lookup(tag)
	return ok
}

// canWrap reports whether fn can be provided without the module's scope.
func (l *moduleLocals) canWrap(fn any) bool {
	_, ok := l.localParams(fn)
	return ok
}

// wrap returns fn, or when fn takes per-module objects a function of the
// same type that passes the module's objects instead of the enclosing
// scope's, and the dig option that keeps fn's name and location in dig's
// messages.
func (l *moduleLocals) wrap(fn any) (any, []dig.ProvideOption) {
	params, ok := l.localParams(fn)
	if !ok || len(params) == 0 {
		return fn, nil
	}
	v := reflect.ValueOf(fn)
	wrapped := reflect.MakeFunc(v.Type(), func(args []reflect.Value) []reflect.Value {
		for _, p := range params {
			local := l.value(p.decorator, fieldOf(args[p.arg], p.path))
			if len(p.path) == 0 {
				args[p.arg] = local
				continue
			}
			s := reflect.New(args[p.arg].Type()).Elem()
			s.Set(args[p.arg])
			s.FieldByIndex(p.path).Set(local)
			args[p.arg] = s
		}
		return v.Call(args)
	})
	return wrapped.Interface(), []dig.ProvideOption{dig.LocationForPC(v.Pointer())}
}

func fieldOf(v reflect.Value, path []int) reflect.Value {
	if len(path) == 0 {
		return v
	}
	return v.FieldByIndex(path)
}

// canSkipScope reports whether a module can do without a dig scope: all
// its cells can be applied without one, it needs none of the
// module-private providers (which must be provided privately), and its
// decorations do not depend on the enclosing module's (they do only
// without the hive's logger and health, which package hive always sets).
func (m *module) canSkipScope(root *Root, l *moduleLocals, wanted func(reflect.Type) bool) bool {
	if root.logger == nil || root.health == nil {
		return false
	}
	for _, p := range root.modulePrivate {
		for _, t := range funcResults(p) {
			if wanted(t) {
				return false
			}
		}
	}
	return cellsScopeFree(m.cells, l)
}

func cellsScopeFree(cells []Cell, l *moduleLocals) bool {
	for _, c := range cells {
		f, ok := c.(scopeFreer)
		if !ok || !f.scopeFree(l) {
			return false
		}
	}
	return true
}

// Exported constructors that can be wrapped need no scope; private ones
// do.
func (p *provider) scopeFree(l *moduleLocals) bool {
	if !p.export {
		return false
	}
	for _, c := range p.ctors {
		if !l.canWrap(c) {
			return false
		}
	}
	return true
}

func (g group) scopeFree(l *moduleLocals) bool { return cellsScopeFree(g, l) }

// A child module decides about its own scope.
func (m *module) scopeFree(*moduleLocals) bool { return true }

// A config's constructor takes nothing; the flags are hive-wide.
func (c *config[T]) scopeFree(*moduleLocals) bool { return true }

func (o *configOverride[T]) scopeFree(*moduleLocals) bool { return true }
