package hubble

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/apiary-net/apiary/datapath/hubble/api/flow"
)

// fieldMask keeps only the listed fields of a flow (GetFlowsRequest's
// field_mask); nil keeps everything.
type fieldMask struct {
	paths [][]string
}

func newFieldMask(fm *fieldmaskpb.FieldMask) (*fieldMask, error) {
	if len(fm.GetPaths()) == 0 {
		return nil, nil
	}
	if !fm.IsValid(&flow.Flow{}) {
		return nil, fmt.Errorf("field_mask: %v names a field flow.Flow does not have", fm.GetPaths())
	}
	m := &fieldMask{}
	for _, p := range fm.GetPaths() {
		m.paths = append(m.paths, strings.Split(p, "."))
	}
	return m, nil
}

func (m *fieldMask) apply(f *flow.Flow) *flow.Flow {
	if m == nil {
		return f
	}
	out := &flow.Flow{}
	for _, p := range m.paths {
		copyPath(f.ProtoReflect(), out.ProtoReflect(), p)
	}
	return out
}

// copyPath copies the field at path from src to dst (sharing the values:
// flows are never modified once in the ring).
func copyPath(src, dst protoreflect.Message, path []string) {
	fd := src.Descriptor().Fields().ByName(protoreflect.Name(path[0]))
	if fd == nil || !src.Has(fd) {
		return
	}
	if len(path) == 1 || fd.Message() == nil || fd.IsList() || fd.IsMap() {
		dst.Set(fd, src.Get(fd))
		return
	}
	copyPath(src.Get(fd).Message(), dst.Mutable(fd).Message(), path[1:])
}
