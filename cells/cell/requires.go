package cell

import "reflect"

// requirer is implemented by cells that can list the types their
// functions take. Modules use it to register only the per-module objects
// (logger, health, lifecycle, job group, ...) that something in them asks
// for: on a large hive, registering all of them in every module dominates
// the cost of building it.
type requirer interface {
	// requires adds the types the cell's functions take; it returns false
	// when it cannot tell.
	requires(add func(reflect.Type)) bool
}

// requiredTypes collects what cells (not descending into child modules)
// take. known is false when some cell cannot tell.
func requiredTypes(cells []Cell) (need map[reflect.Type]bool, known bool) {
	need = map[reflect.Type]bool{}
	add := func(t reflect.Type) { need[t] = true }
	for _, c := range cells {
		r, ok := c.(requirer)
		if !ok || !r.requires(add) {
			return nil, false
		}
	}
	return need, true
}

// funcParams adds the parameter types of fn, expanding cell.In structs.
func funcParams(fn any, add func(reflect.Type)) {
	t := reflect.TypeOf(fn)
	if t == nil || t.Kind() != reflect.Func {
		return
	}
	for i := range t.NumIn() {
		paramTypes(t.In(i), add)
	}
}

func paramTypes(t reflect.Type, add func(reflect.Type)) {
	if !embeds(t, inType) {
		add(t)
		return
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type == inType || !f.IsExported() {
			continue
		}
		paramTypes(f.Type, add)
	}
}

// funcResults lists the result types of fn, expanding cell.Out structs.
func funcResults(fn any) []reflect.Type {
	t := reflect.TypeOf(fn)
	if t == nil || t.Kind() != reflect.Func {
		return nil
	}
	var out []reflect.Type
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		if !embeds(t, outType) {
			out = append(out, t)
			return
		}
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && !(f.Anonymous && f.Type == outType) {
				walk(f.Type)
			}
		}
	}
	for i := range t.NumOut() {
		if t.Out(i) != errorType {
			walk(t.Out(i))
		}
	}
	return out
}

func (p *provider) requires(add func(reflect.Type)) bool {
	for _, c := range p.ctors {
		funcParams(c, add)
	}
	return true
}

func (iv *invoke) requires(add func(reflect.Type)) bool {
	for _, fn := range iv.fns {
		funcParams(fn, add)
	}
	return true
}

func (d *decorate) requires(add func(reflect.Type)) bool {
	funcParams(d.fn, add)
	for _, c := range d.cells {
		r, ok := c.(requirer)
		if !ok || !r.requires(add) {
			return false
		}
	}
	return true
}

func (g group) requires(add func(reflect.Type)) bool {
	for _, c := range g {
		r, ok := c.(requirer)
		if !ok || !r.requires(add) {
			return false
		}
	}
	return true
}

// A child module registers what it needs in its own scope.
func (m *module) requires(func(reflect.Type)) bool { return true }

func (c *config[T]) requires(func(reflect.Type)) bool { return true }

func (o *configOverride[T]) requires(func(reflect.Type)) bool { return true }
