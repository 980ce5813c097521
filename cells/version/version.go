package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// Version is the release version of this build. Set it when linking:
//
//	go build -ldflags "-X github.com/apiary-net/apiary/cells/version.Version=1.2.3"
var Version = "dev"

// processStart approximates the start of the process: package
// initialisation runs before main, within milliseconds of exec.
var processStart = time.Now()

// Info describes a build.
type Info struct {
	// Version is the release version ("dev" when not set at link time).
	Version string `json:"version"`
	// GoVersion is the Go toolchain that built the binary.
	GoVersion string `json:"go-version"`
	// Commit is the VCS revision the binary was built from, if recorded.
	Commit string `json:"commit,omitempty"`
	// CommitTime is the time of that revision, if recorded.
	CommitTime string `json:"commit-time,omitempty"`
	// Modified is true when the work tree had uncommitted changes.
	Modified bool `json:"modified,omitempty"`
	// Platform is GOOS/GOARCH.
	Platform string `json:"platform"`
}

// Get returns the version of the running binary.
func Get() Info {
	info := Info{
		Version:   Version,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return info
	}
	if bi.GoVersion != "" {
		info.GoVersion = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Commit = s.Value
		case "vcs.time":
			info.CommitTime = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	return info
}

// String formats the version on one line:
// "1.2.3 (go1.26.0, linux/amd64, commit 0123abcd)".
func (i Info) String() string {
	parts := []string{i.GoVersion, i.Platform}
	if i.Commit != "" {
		c := i.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		if i.Modified {
			c += "-dirty"
		}
		parts = append(parts, "commit "+c)
	}
	return fmt.Sprintf("%s (%s)", i.Version, strings.Join(parts, ", "))
}

// ProcessStart returns when the running process started (when this
// package was initialised, a few milliseconds after exec).
func ProcessStart() time.Time { return processStart }

// Uptime returns how long the process has been running.
func Uptime() time.Duration { return time.Since(processStart) }
