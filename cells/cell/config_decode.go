package cell

import (
	"encoding"
	"encoding/csv"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

var (
	durationType        = reflect.TypeFor[time.Duration]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// decodeConfig builds a T from the flag values named in mapping, starting
// from def.
func decodeConfig[T any](def T, fs *pflag.FlagSet, mapping []fieldFlag) (T, error) {
	out := def
	v := reflect.ValueOf(&out).Elem()
	for _, m := range mapping {
		f := fs.Lookup(m.flag)
		if f == nil {
			return out, fmt.Errorf("flag --%s is not registered", m.flag)
		}
		if err := setFromFlag(v.Field(m.field), f); err != nil {
			return out, fmt.Errorf("flag --%s: %w", m.flag, err)
		}
	}
	return out, nil
}

func setFromFlag(fv reflect.Value, f *pflag.Flag) error {
	switch {
	case fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() != reflect.Uint8:
		return setSlice(fv, sliceOf(f.Value))
	case fv.Kind() == reflect.Map:
		return setMap(fv, f.Value)
	default:
		return setScalar(fv, f.Value.String())
	}
}

func sliceOf(v pflag.Value) []string {
	if sv, ok := v.(pflag.SliceValue); ok {
		return sv.GetSlice()
	}
	s := strings.TrimSuffix(strings.TrimPrefix(v.String(), "["), "]")
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func setSlice(fv reflect.Value, items []string) error {
	out := reflect.MakeSlice(fv.Type(), len(items), len(items))
	for i, it := range items {
		if err := setScalar(out.Index(i), it); err != nil {
			return fmt.Errorf("item %d: %w", i, err)
		}
	}
	if len(items) == 0 {
		out = reflect.Zero(fv.Type())
	}
	fv.Set(out)
	return nil
}

func setMap(fv reflect.Value, v pflag.Value) error {
	t := fv.Type()
	if t.Key().Kind() != reflect.String || t.Elem().Kind() != reflect.String {
		return fmt.Errorf("unsupported field type %s (maps must be map[string]string)", t)
	}
	s := strings.TrimSuffix(strings.TrimPrefix(v.String(), "["), "]")
	m := reflect.MakeMap(t)
	if strings.TrimSpace(s) != "" {
		records, err := csv.NewReader(strings.NewReader(s)).Read()
		if err != nil {
			return fmt.Errorf("parse %q: %w", s, err)
		}
		for _, r := range records {
			k, val, ok := strings.Cut(r, "=")
			if !ok {
				return fmt.Errorf("%q is not key=value", r)
			}
			m.SetMapIndex(reflect.ValueOf(k).Convert(t.Key()), reflect.ValueOf(val).Convert(t.Elem()))
		}
	}
	fv.Set(m)
	return nil
}

func setScalar(fv reflect.Value, s string) error {
	if fv.CanAddr() && fv.Addr().Type().Implements(textUnmarshalerType) {
		if s == "" {
			fv.SetZero()
			return nil
		}
		return fv.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s))
	}
	var err error
	switch fv.Kind() {
	case reflect.String:
		fv.SetString(s)
	case reflect.Bool:
		var b bool
		b, err = strconv.ParseBool(s)
		fv.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		err = setInt(fv, s)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		var u uint64
		u, err = strconv.ParseUint(s, 0, fv.Type().Bits())
		fv.SetUint(u)
	case reflect.Float32, reflect.Float64:
		var f float64
		f, err = strconv.ParseFloat(s, fv.Type().Bits())
		fv.SetFloat(f)
	default:
		return fmt.Errorf("unsupported field type %s", fv.Type())
	}
	if err != nil {
		return fmt.Errorf("invalid value %q: %w", s, unwrapNum(err))
	}
	return nil
}

func setInt(fv reflect.Value, s string) error {
	if fv.Type() == durationType {
		d, err := time.ParseDuration(s)
		fv.SetInt(int64(d))
		return err
	}
	i, err := strconv.ParseInt(s, 0, fv.Type().Bits())
	fv.SetInt(i)
	return err
}

func unwrapNum(err error) error {
	if ne, ok := err.(*strconv.NumError); ok {
		return ne.Err
	}
	return err
}
