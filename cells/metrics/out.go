package metrics

import (
	"reflect"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/apiary-net/apiary/cells/cell"
)

// GroupOut registers several collectors with the agent's registry: return
// it from a constructor registered with cell.Provide.
type GroupOut struct {
	cell.Out

	Collectors []prometheus.Collector `group:"metrics,flatten"`
}

// NewGroupOut registers the prometheus.Collector fields of each metrics
// struct (a pointer to a struct such as kvstore.Metrics) and any
// collector given directly.
func NewGroupOut(metrics ...any) GroupOut {
	var out GroupOut
	for _, m := range metrics {
		if c, ok := m.(prometheus.Collector); ok {
			out.Collectors = append(out.Collectors, c)
			continue
		}
		out.Collectors = append(out.Collectors, CollectorsOf(m)...)
	}
	return out
}

// CollectorsOf returns the exported prometheus.Collector fields of the
// struct m points to, in field order (nil fields skipped). It panics if m
// is not a pointer to a struct: a programmer error.
func CollectorsOf(m any) []prometheus.Collector {
	v := reflect.ValueOf(m)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		panic("metrics.CollectorsOf: not a pointer to a struct: " + v.Type().String())
	}
	v = v.Elem()
	collector := reflect.TypeFor[prometheus.Collector]()
	var out []prometheus.Collector
	for i := range v.NumField() {
		f := v.Field(i)
		if !v.Type().Field(i).IsExported() || !f.Type().Implements(collector) {
			continue
		}
		if (f.Kind() == reflect.Pointer || f.Kind() == reflect.Interface) && f.IsNil() {
			continue
		}
		out = append(out, f.Interface().(prometheus.Collector))
	}
	return out
}
