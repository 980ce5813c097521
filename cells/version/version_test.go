package version_test

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/version"
)

func TestGet(t *testing.T) {
	info := version.Get()
	if info.Version != version.Version {
		t.Errorf("Version = %q, want %q", info.Version, version.Version)
	}
	if info.GoVersion != runtime.Version() {
		t.Errorf("GoVersion = %q, want %q", info.GoVersion, runtime.Version())
	}
	if want := runtime.GOOS + "/" + runtime.GOARCH; info.Platform != want {
		t.Errorf("Platform = %q, want %q", info.Platform, want)
	}
}

func TestInfoString(t *testing.T) {
	tests := []struct {
		name string
		give version.Info
		want string
	}{
		{
			name: "no commit",
			give: version.Info{Version: "dev", GoVersion: "go1.26.0", Platform: "linux/amd64"},
			want: "dev (go1.26.0, linux/amd64)",
		},
		{
			name: "dirty commit shortened",
			give: version.Info{Version: "1.2.3", GoVersion: "go1.26.0", Platform: "linux/arm64",
				Commit: "0123456789abcdef0123", Modified: true},
			want: "1.2.3 (go1.26.0, linux/arm64, commit 0123456789ab-dirty)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.give.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestProcessStart(t *testing.T) {
	start := version.ProcessStart()
	if start.After(time.Now()) || !strings.Contains(version.Uptime().String(), "s") {
		t.Errorf("ProcessStart() = %v is in the future or Uptime() = %v is malformed", start, version.Uptime())
	}
	if version.Uptime() <= 0 {
		t.Errorf("Uptime() = %v, want > 0", version.Uptime())
	}
}
