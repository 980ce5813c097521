package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ErrTrailingData is the error of DecodeStrict for a body that holds
// more than one JSON value.
var ErrTrailingData = errors.New("data after the object: a body holds exactly one JSON value")

// DecodeStrict decodes exactly one JSON value from r into v: unknown
// fields are refused, and so is anything but white space after the value
// (a second object would otherwise be ignored without a word).
func DecodeStrict(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	var extra json.RawMessage
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
		return nil
	case err != nil:
		return fmt.Errorf("after the value: %w", err)
	default:
		return ErrTrailingData
	}
}
