package policyapi

import (
	"errors"
	"fmt"
)

// ErrTooLarge is wrapped by the error of an input or document over a
// size limit; test with errors.Is.
var ErrTooLarge = errors.New("too large")

// Defaults of Limits: generous for real policies (Kubernetes itself
// stores objects of at most about 1.5 MiB), small enough that no input
// takes more than a few hundred MiB to parse.
const (
	// DefaultMaxDocumentSize is 8 MiB.
	DefaultMaxDocumentSize = 8 << 20
	// DefaultMaxInputSize is 16 MiB.
	DefaultMaxInputSize = 16 << 20
)

// Flag names of the limits, as errors name them.
const (
	FlagMaxDocumentSize = "policy-max-document-size"
	FlagMaxInputSize    = "policy-max-input-size"
)

// Limits bound the memory parsing one input may take. Sizes are of the
// decoded form: the bytes of the document as JSON with every YAML alias
// expanded (an alias counts as often as it is used), so that a small
// document of aliases to a large string cannot expand to gigabytes. The
// limits are checked while decoding: a document is refused as soon as it
// passes one, before it expands further. Zero fields mean the defaults.
type Limits struct {
	// MaxDocumentSize bounds one document (--policy-max-document-size).
	MaxDocumentSize int64
	// MaxInputSize bounds one input (a file, a request): its raw bytes,
	// and its documents decoded together (--policy-max-input-size).
	MaxInputSize int64
}

// DefaultLimits returns the defaults.
func DefaultLimits() Limits {
	return Limits{MaxDocumentSize: DefaultMaxDocumentSize, MaxInputSize: DefaultMaxInputSize}
}

// orDefaults fills zero fields with the defaults.
func (l Limits) orDefaults() Limits {
	if l.MaxDocumentSize == 0 {
		l.MaxDocumentSize = DefaultMaxDocumentSize
	}
	if l.MaxInputSize == 0 {
		l.MaxInputSize = DefaultMaxInputSize
	}
	return l
}

// Validate checks that the limits are not negative.
func (l Limits) Validate() error {
	var errs []error
	if l.MaxDocumentSize < 0 {
		errs = append(errs, fmt.Errorf("--%s: %d is negative", FlagMaxDocumentSize, l.MaxDocumentSize))
	}
	if l.MaxInputSize < 0 {
		errs = append(errs, fmt.Errorf("--%s: %d is negative", FlagMaxInputSize, l.MaxInputSize))
	}
	return errors.Join(errs...)
}

// InputTooLarge is the error of an input of size raw bytes over
// MaxInputSize; size is negative when a reader stopped at the limit and
// does not know it.
func (l Limits) InputTooLarge(size int64) error {
	limit := describeLimit(l.orDefaults().MaxInputSize, FlagMaxInputSize)
	if size < 0 {
		return fmt.Errorf("%w: more than the %s", ErrTooLarge, limit)
	}
	return fmt.Errorf("%w: %d bytes, over the %s", ErrTooLarge, size, limit)
}

// ExpandedInputTooLarge is the error of an input whose YAML, aliases
// expanded, is over MaxInputSize, for decoders that check it before
// decoding (a simulation scenario).
func (l Limits) ExpandedInputTooLarge() error {
	return fmt.Errorf("%w: decodes to more than the %s (YAML aliases count each time they are used)",
		ErrTooLarge, describeLimit(l.orDefaults().MaxInputSize, FlagMaxInputSize))
}

// MaxInput is MaxInputSize, or its default when zero.
func (l Limits) MaxInput() int64 { return l.orDefaults().MaxInputSize }

// describeLimit says "limit of 8388608 bytes (8 MiB) set by --flag".
func describeLimit(limit int64, flag string) string {
	return fmt.Sprintf("limit of %d bytes%s set by --%s", limit, humanBytes(limit), flag)
}

// humanBytes is " (n GiB)", " (n MiB)" or " (n KiB)" when n is a whole
// number of them, else empty.
func humanBytes(n int64) string {
	for _, u := range []struct {
		size int64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf(" (%d %s)", n/u.size, u.name)
		}
	}
	return ""
}
