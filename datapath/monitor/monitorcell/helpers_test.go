package monitorcell_test

import (
	"iter"
	"strings"
)

// iterPull is iter.Pull2 for (message, error) sequences, returning both
// values and whether the sequence went on.
func iterPull[V any](seq iter.Seq2[V, error]) (func() (V, error, bool), func()) {
	next, stop := iter.Pull2(seq)
	return func() (V, error, bool) {
		v, err, ok := next()
		return v, err, ok
	}, stop
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
