package loadercell

import (
	"fmt"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// deviceFilter is --devices as Cilium reads it: a device name, a prefix
// ("eth+": every device whose name starts with eth) or either of them
// after "!" (those devices never). The first entry a name matches
// decides.
type deviceFilter []string

// match reports whether an entry matches name, and whether that entry
// leaves the device out.
func (f deviceFilter) match(name string) (matched, excluded bool) {
	for _, e := range f {
		e, excluded = strings.CutPrefix(e, "!")
		if prefix, ok := strings.CutSuffix(e, "+"); ok {
			if strings.HasPrefix(name, prefix) {
				return true, excluded
			}
		} else if name == e {
			return true, excluded
		}
	}
	return false, false
}

// names reports whether f lists device names only (no prefix, no "!"):
// each must be a device of the namespace when the agent starts.
func (f deviceFilter) names() bool {
	return len(f) > 0 && !slices.ContainsFunc(f, func(e string) bool {
		return strings.HasPrefix(e, "!") || strings.HasSuffix(e, "+")
	})
}

// positive reports whether f has a name or a prefix (not only
// exclusions): the devices it matches are then the only ones, unless
// --enforce-device-detection.
func (f deviceFilter) positive() bool {
	return slices.ContainsFunc(f, func(e string) bool { return !strings.HasPrefix(e, "!") })
}

// check reports the first entry that is not a name, a prefix or either
// after "!".
func (f deviceFilter) check() error {
	for i, e := range f {
		name := strings.TrimSuffix(strings.TrimPrefix(e, "!"), "+")
		bad := ""
		switch {
		case name == "" && strings.HasSuffix(e, "+"):
			bad = "an empty prefix (every device): leave --devices out to detect them"
		case name == "":
			bad = "not a device name"
		case len(name) >= unix.IFNAMSIZ:
			bad = fmt.Sprintf("longer than a device name (%d characters)", unix.IFNAMSIZ-1)
		case strings.ContainsAny(name, "/ :!+") || strings.ContainsFunc(name, func(r rune) bool { return r <= ' ' || r > '~' }):
			bad = "not a device name"
		}
		if bad != "" {
			return fmt.Errorf("--devices[%d]: %q is %s (a name such as eth0, a prefix such as eth+, or either after ! to leave those out)", i, e, bad)
		}
	}
	return nil
}
