package api_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/api"
)

func TestDecodeStrict(t *testing.T) {
	type body struct {
		Name string `json:"name"`
	}
	tests := []struct {
		name    string
		give    string
		wantErr string
	}{
		{name: "one object", give: `{"name":"a"}`},
		{name: "white space after", give: "{\"name\":\"a\"}\n\t \n"},
		{name: "second object", give: `{"name":"a"}{"name":"b"}`, wantErr: api.ErrTrailingData.Error()},
		{name: "second value on a new line", give: "{\"name\":\"a\"}\n[]", wantErr: api.ErrTrailingData.Error()},
		{name: "garbage after", give: `{"name":"a"} x`, wantErr: "after the value"},
		{name: "unknown field", give: `{"nmae":"a"}`, wantErr: `unknown field "nmae"`},
		{name: "empty", give: ``, wantErr: "EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b body
			err := api.DecodeStrict(strings.NewReader(tt.give), &b)
			if tt.wantErr == "" {
				if err != nil || b.Name != "a" {
					t.Fatalf("DecodeStrict = %+v, %v", b, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want one saying %q", err, tt.wantErr)
			}
			if tt.wantErr == api.ErrTrailingData.Error() && !errors.Is(err, api.ErrTrailingData) {
				t.Fatalf("error %v is not ErrTrailingData", err)
			}
		})
	}
}
