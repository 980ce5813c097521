package models_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/api/models"
)

func TestDuration(t *testing.T) {
	b, err := json.Marshal(models.Duration(1500 * time.Millisecond))
	if err != nil || string(b) != `"1.5s"` {
		t.Fatalf("Marshal = %s, %v, want \"1.5s\"", b, err)
	}
	tests := []struct {
		name    string
		give    string
		want    time.Duration
		wantErr bool
	}{
		{name: "string", give: `"2ms"`, want: 2 * time.Millisecond},
		{name: "nanoseconds", give: `42`, want: 42},
		{name: "bad string", give: `"soon"`, wantErr: true},
		{name: "bad type", give: `true`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d models.Duration
			err := json.Unmarshal([]byte(tt.give), &d)
			if (err != nil) != tt.wantErr || !tt.wantErr && time.Duration(d) != tt.want {
				t.Errorf("Unmarshal(%s) = %v, %v; want %v, error %v", tt.give, d, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestWorse(t *testing.T) {
	tests := []struct {
		a, b, want models.State
	}{
		{models.StateOk, models.StateDisabled, models.StateOk},
		{models.StateDisabled, models.StateOk, models.StateOk},
		{models.StateOk, models.StateWarning, models.StateWarning},
		{models.StateFailure, models.StateWarning, models.StateFailure},
	}
	for _, tt := range tests {
		if got := models.Worse(tt.a, tt.b); got != tt.want {
			t.Errorf("Worse(%s, %s) = %s, want %s", tt.a, tt.b, got, tt.want)
		}
	}
}
