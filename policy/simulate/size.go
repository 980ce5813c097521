package simulate

import (
	"errors"
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/apiary-net/apiary/policy/policyapi"
)

// checkExpandedSize refuses YAML that is over limits.MaxInputSize with
// every alias expanded, before it is decoded: decoding copies maps and
// lists an alias stands for, and error messages quote values, so a small
// file of aliases to a large value would take gigabytes. The YAML is
// parsed into nodes, where an alias is one node pointing at its anchor,
// and each anchor's size is computed once.
func checkExpandedSize(data []byte, limits policyapi.Limits) error {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil // the decoder reports it
	}
	s := &nodeSizer{limit: limits.MaxInput(), memo: map[*yaml.Node]int64{}, busy: map[*yaml.Node]bool{}}
	_, err := s.size(&root)
	if s.over {
		return limits.ExpandedInputTooLarge()
	}
	return err
}

// errOver stops sizing once past the limit.
var errOver = errors.New("over the limit")

// nodeSizer computes the size of nodes as JSON (without escapes), aliases
// expanded, stopping past limit.
type nodeSizer struct {
	limit int64
	memo  map[*yaml.Node]int64
	busy  map[*yaml.Node]bool // being sized: an alias to one is a cycle
	over  bool                // the size passed the limit
}

func (s *nodeSizer) size(n *yaml.Node) (int64, error) {
	if size, ok := s.memo[n]; ok {
		return size, nil
	}
	if s.busy[n] {
		return 0, fmt.Errorf("anchor %q contains an alias to itself", n.Anchor)
	}
	s.busy[n] = true
	defer delete(s.busy, n)
	var size int64
	switch n.Kind {
	case yaml.ScalarNode:
		size = int64(len(n.Value)) + 2
	case yaml.AliasNode:
		if n.Alias == nil {
			return 0, nil // the decoder reports it
		}
		a, err := s.size(n.Alias)
		if err != nil {
			return 0, err
		}
		size = a
	default: // document, mapping, sequence
		size = 2
		for _, c := range n.Content {
			cs, err := s.size(c)
			if err != nil {
				return 0, err
			}
			if size += cs + 1; size > s.limit {
				break
			}
		}
	}
	if size > s.limit {
		s.over = true
		return 0, errOver
	}
	s.memo[n] = size
	return size, nil
}
