package policyapi

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"unicode/utf8"
)

// ctxCheckInterval is how many values the converter converts between
// checks of its context.
const ctxCheckInterval = 4096

// sizeBudget counts the decoded size of an input's documents against
// the limits while converting them, and checks for cancellation.
type sizeBudget struct {
	ctx    context.Context
	limits Limits
	input  int64 // decoded bytes of the earlier documents
	doc    int64 // decoded bytes of the current document so far
	values int
}

func newSizeBudget(ctx context.Context, limits Limits) *sizeBudget {
	return &sizeBudget{ctx: ctx, limits: limits.orDefaults()}
}

// startDocument closes the previous document's count.
func (b *sizeBudget) startDocument() {
	b.input += b.doc
	b.doc = 0
}

// inputExceeded reports whether the documents so far passed the input
// limit; parsing stops there.
func (b *sizeBudget) inputExceeded() bool {
	return b.input+b.doc > b.limits.MaxInputSize
}

// add counts n bytes of the current document.
func (b *sizeBudget) add(n int) error {
	b.doc += int64(n)
	switch {
	case b.doc > b.limits.MaxDocumentSize:
		return fmt.Errorf("%w: decodes to more than the %s (YAML aliases count each time they are used)",
			ErrTooLarge, describeLimit(b.limits.MaxDocumentSize, FlagMaxDocumentSize))
	case b.inputExceeded():
		return fmt.Errorf("%w: the documents up to this one decode to more than the %s",
			ErrTooLarge, describeLimit(b.limits.MaxInputSize, FlagMaxInputSize))
	}
	return nil
}

// count counts one value of n bytes and checks the context now and then.
func (b *sizeBudget) count(n int) error {
	b.values++
	if b.values%ctxCheckInterval == 0 {
		if err := b.ctx.Err(); err != nil {
			return err
		}
	}
	return b.add(n)
}

// convert turns a value decoded by go.yaml.in/yaml/v2 into the value
// encoding/json would decode (with UseNumber) from its JSON form, as
// sigs.k8s.io/yaml's YAMLToJSON followed by json.Decoder does: keys
// become strings, numbers json.Number, strings valid UTF-8. It shares
// strings with its input instead of writing the JSON out, and counts the
// size of the JSON form (without escapes) as it goes, so an alias to a
// large string used many times is refused before anything is copied.
// Two keys that become the same string (1 and "1") are an error, where
// YAMLToJSON would keep one of them at random.
func (b *sizeBudget) convert(v any) (any, error) {
	switch v := v.(type) {
	case map[any]any:
		return b.convertMap(v)
	case map[string]any:
		return b.convertStringMap(v)
	case []any:
		if err := b.count(2); err != nil { // [ ]
			return nil, err
		}
		out := make([]any, len(v))
		for i, e := range v {
			if err := b.add(1); err != nil { // ,
				return nil, err
			}
			c, err := b.convert(e)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case string:
		if err := b.count(len(v) + 2); err != nil { // counted before it is scanned
			return nil, err
		}
		return jsonString(v), nil
	case bool:
		return v, b.count(5)
	case nil:
		return nil, b.count(4)
	}
	n, err := jsonNumber(v)
	if err != nil {
		return nil, err
	}
	return n, b.count(len(n))
}

func (b *sizeBudget) convertMap(m map[any]any) (any, error) {
	return convertMapOf(b, m, jsonKey)
}

// convertStringMap converts a map already keyed by strings (a value
// decoded from JSON), as convertMap does.
func (b *sizeBudget) convertStringMap(m map[string]any) (any, error) {
	return convertMapOf(b, m, func(k string) (string, error) { return jsonString(k), nil })
}

// convertMapOf converts a map to one keyed by the JSON strings key gives
// its keys, counting it as its JSON text; two keys giving one string are
// refused.
func convertMapOf[K comparable](b *sizeBudget, m map[K]any, key func(K) (string, error)) (any, error) {
	if err := b.count(2); err != nil { // { }
		return nil, err
	}
	out := make(map[string]any, len(m))
	for k, e := range m {
		name, err := key(k)
		if err != nil {
			return nil, err
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("key %q appears twice once converted to a string", name)
		}
		if err := b.add(len(name) + 4); err != nil { // "key":,
			return nil, err
		}
		c, err := b.convert(e)
		if err != nil {
			return nil, err
		}
		out[name] = c
	}
	return out, nil
}

// share is convert for a value decoded from JSON (ParseValueContext),
// which it must not change: it returns v itself wherever v already is
// what convert would return (keys and strings valid UTF-8, no number), so
// that only the maps and lists holding numbers or invalid UTF-8 are
// copied; changed says whether the result is not v. It counts exactly as
// convert does.
func (b *sizeBudget) share(v any) (_ any, changed bool, _ error) {
	switch v := v.(type) {
	case map[string]any:
		return b.shareMap(v)
	case []any:
		if err := b.count(2); err != nil { // [ ]
			return nil, false, err
		}
		var out []any // a copy, once an item changes
		for i, e := range v {
			if err := b.add(1); err != nil { // ,
				return nil, false, err
			}
			c, changed, err := b.share(e)
			if err != nil {
				return nil, false, err
			}
			if changed && out == nil {
				out = slices.Clone(v)
			}
			if out != nil {
				out[i] = c
			}
		}
		if out == nil {
			return v, false, nil
		}
		return out, true, nil
	case string:
		if err := b.count(len(v) + 2); err != nil {
			return nil, false, err
		}
		if utf8.ValidString(v) {
			return v, false, nil
		}
		return jsonString(v), true, nil
	case bool:
		return v, false, b.count(5)
	case nil:
		return nil, false, b.count(4)
	}
	c, err := b.convert(v)
	return c, true, err
}

// shareMap is share for a map, copied once a key or a value changes.
func (b *sizeBudget) shareMap(m map[string]any) (any, bool, error) {
	if err := b.count(2); err != nil { // { }
		return nil, false, err
	}
	var (
		out     map[string]any  // a copy, once a key or a value changes
		renamed map[string]bool // keys that were invalid UTF-8, converted
	)
	for k, e := range m {
		key := jsonString(k)
		if err := b.add(len(key) + 4); err != nil { // "key":,
			return nil, false, err
		}
		c, changed, err := b.share(e)
		if err != nil {
			return nil, false, err
		}
		if !changed && key == k {
			continue
		}
		if out == nil {
			out = maps.Clone(m)
		}
		if key != k {
			if _, dup := m[key]; dup || renamed[key] {
				return nil, false, fmt.Errorf("key %q appears twice once converted to a string", key)
			}
			if renamed == nil {
				renamed = map[string]bool{}
			}
			renamed[key] = true
			delete(out, k)
		}
		out[key] = c
	}
	if out == nil {
		return m, false, nil
	}
	return out, true, nil
}

// jsonKey converts a YAML map key to a JSON object key as
// sigs.k8s.io/yaml does.
func jsonKey(k any) (string, error) {
	switch k := k.(type) {
	case string:
		return jsonString(k), nil // a !!binary key can hold any bytes
	case int:
		return strconv.Itoa(k), nil
	case int64:
		return strconv.FormatInt(k, 10), nil
	case float64:
		switch s := strconv.FormatFloat(k, 'g', -1, 32); s {
		case "+Inf":
			return ".inf", nil
		case "-Inf":
			return "-.inf", nil
		case "NaN":
			return ".nan", nil
		default:
			return s, nil
		}
	case bool:
		return strconv.FormatBool(k), nil
	}
	return "", fmt.Errorf("unsupported map key of type %T", k)
}

// jsonNumber formats a YAML number as encoding/json writes it.
func jsonNumber(v any) (json.Number, error) {
	switch v := v.(type) {
	case int:
		return json.Number(strconv.Itoa(v)), nil
	case int64:
		return json.Number(strconv.FormatInt(v, 10)), nil
	case uint64:
		return json.Number(strconv.FormatUint(v, 10)), nil
	case float64:
		b, err := json.Marshal(v) // NaN and infinities are errors
		if err != nil {
			return "", err
		}
		return json.Number(b), nil
	}
	return "", fmt.Errorf("unsupported value of type %T", v)
}

// jsonString returns s with each invalid UTF-8 byte replaced by U+FFFD,
// as encoding/json writes it (a !!binary value can hold any bytes). A
// valid string is returned as is, not copied.
func jsonString(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	out := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, s[i:i+size]...)
		}
		i += size
	}
	return string(out)
}
