package cli_test

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/api/models"
)

func TestStatus(t *testing.T) {
	socket := startAgent(t)
	code, out, errOut := run(t, socket, "status")
	if code != 0 || errOut != "" {
		t.Fatalf("apiary status = %d, stderr %q", code, errOut)
	}
	want := []string{
		`^Agent: +Ok +dev \(go.*\), up [0-9hms]+$`,
		`^State dir: +Ok +/.*/state \(mode 0750, .* free\)$`,
		`^Metrics: +Disabled +--prometheus-serve-addr is empty$`,
		`^API: +Ok +/.*/apiary.sock, \d+ requests in flight$`,
		`^Controllers: +Ok +0/0 healthy$`,
		`^Hive: +Ok +7 modules, 0 degraded$`,
		`^Overall: +Ok$`,
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("apiary status printed %d lines, want %d:\n%s", len(lines), len(want), out)
	}
	column := stateColumn(lines[0])
	for i, re := range want {
		if !regexp.MustCompile(re).MatchString(lines[i]) {
			t.Errorf("line %d = %q, want match for %s", i, lines[i], re)
		}
		if got := stateColumn(lines[i]); got != column {
			t.Errorf("line %d: state starts at column %d, want %d (aligned)", i, got, column)
		}
	}
}

// stateColumn returns where the state starts: after "Name:" and blanks.
func stateColumn(line string) int {
	i := strings.Index(line, ":") + 1
	for i < len(line) && line[i] == ' ' {
		i++
	}
	return i
}

func TestStatusJSON(t *testing.T) {
	socket := startAgent(t)
	code, out, _ := run(t, socket, "status", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var st models.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("output is not a status document: %v\n%s", err, out)
	}
	if st.State != models.StateOk || len(st.Entries) != 6 || st.Entries[0].Name != "Agent" {
		t.Errorf("status = %+v, want Ok with 6 entries starting with Agent", st)
	}
	if code, _, errOut := run(t, socket, "status", "-o", "yaml"); code != 1 || errOut != "--output: \"yaml\" is not text or json\n" {
		t.Errorf("-o yaml = %d %q, want a one-line error", code, errOut)
	}
}

func TestStatusFailing(t *testing.T) {
	socket := startAgent(t, broken)
	t.Run("plain", func(t *testing.T) {
		_, out, _ := run(t, socket, "status")
		for _, want := range []string{
			"KVStore:       Failure    not connected\n",
			"  - dial 127.0.0.1:2379: refused\n",
			"  - sync-kvstore (module broken): 1 consecutive failure(s): etcd unreachable\n",
			"  - broken.watcher: watch failed: etcd unreachable\n",
			"Overall:       Failure\n",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("output has no %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, "last probe") {
			t.Errorf("non-verbose output shows probe times:\n%s", out)
		}
	})
	t.Run("brief", func(t *testing.T) {
		code, out, _ := run(t, socket, "status", "--brief")
		if code != 1 || out != "Failure: Hive, KVStore, warnings: Controllers\n" {
			t.Errorf("--brief = %d %q, want 1 and the failing subsystems", code, out)
		}
	})
	t.Run("all controllers", func(t *testing.T) {
		_, out, _ := run(t, socket, "status", "--all-controllers")
		re := regexp.MustCompile(`(?m)^  sync-kvstore +broken +never +\d+s ago +1/1 +etcd unreachable$`)
		if !strings.Contains(out, "Controllers: 0/1 healthy\n") || !re.MatchString(out) {
			t.Errorf("--all-controllers output has no controller row:\n%s", out)
		}
	})
	t.Run("verbose", func(t *testing.T) {
		_, out, _ := run(t, socket, "status", "--verbose")
		for _, want := range []*regexp.Regexp{
			regexp.MustCompile(`\(last probe \d+s ago, took [0-9.]+[µnm]?s\)`),
			regexp.MustCompile(`(?m)^Modules:$`),
			regexp.MustCompile(`(?m)^  broken +Degraded +- +Always broken$`),
			regexp.MustCompile(`(?m)^    watcher +Degraded +\d+s ago +watch failed: etcd unreachable$`),
		} {
			if !want.MatchString(out) {
				t.Errorf("--verbose output has no match for %s:\n%s", want, out)
			}
		}
	})
}

func TestStatusBriefOK(t *testing.T) {
	socket := startAgent(t)
	if code, out, _ := run(t, socket, "status", "--brief"); code != 0 || out != "OK\n" {
		t.Errorf("--brief = %d %q, want 0 OK", code, out)
	}
}

func TestHive(t *testing.T) {
	socket := startAgent(t)
	code, out, _ := run(t, socket, "hive")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`^Hive: OK\n\n`),
		regexp.MustCompile(`(?m)^Module +Level +Since +Message$`),
		regexp.MustCompile(`(?m)^api-server +OK +\d+s ago +REST API on a unix socket: listening on ` + regexp.QuoteMeta(socket) + `$`),
		regexp.MustCompile(`(?m)^statedir +OK +\d+s ago +State directory that survives restarts: using /`),
		regexp.MustCompile(`(?m)^  job-probe-status +OK +\d+s ago +last run succeeded$`),
		regexp.MustCompile(`(?m)^Start hooks \(populate took [0-9.]+[µnm]?s, start [0-9.]+[µnm]?s\):$`),
		regexp.MustCompile(`(?m)^  \d+ +api-server +\*api\.server\.Start +[0-9.]+[µnm]?s$`),
	} {
		if !want.MatchString(out) {
			t.Errorf("apiary hive output has no match for %s:\n%s", want, out)
		}
	}
}

func TestVersion(t *testing.T) {
	socket := startAgent(t)
	code, out, _ := run(t, socket, "version")
	re := regexp.MustCompile(`^Client: dev \(go[^)]*\)\nAgent:  dev \(go[^)]*\)\n$`)
	if code != 0 || !re.MatchString(out) {
		t.Errorf("apiary version = %d %q, want client and agent versions", code, out)
	}
}

func TestAgentNotRunning(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "apiary.sock")
	want := "cannot reach apiary-agent at " + socket + ": is it running? (dial unix " + socket +
		": connect: no such file or directory)\n"
	for _, args := range [][]string{{"status"}, {"status", "--brief"}, {"status", "-o", "json"}, {"hive"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, out, errOut := run(t, socket, args...)
			if code != 1 || out != "" || errOut != want {
				t.Errorf("= %d, stdout %q, stderr %q; want 1, nothing, %q", code, out, errOut, want)
			}
		})
	}
	t.Run("version", func(t *testing.T) {
		code, out, errOut := run(t, socket, "version")
		if code != 0 || !strings.HasPrefix(out, "Client: ") || errOut != want {
			t.Errorf("= %d, stdout %q, stderr %q; want the client version and the error line", code, out, errOut)
		}
	})
}

func TestSocketFromEnvironment(t *testing.T) {
	socket := startAgent(t)
	t.Setenv("APIARY_SOCK", socket)
	var out, errOut strings.Builder
	if code := runWithoutSocketFlag(&out, &errOut, "status", "--brief"); code != 0 || out.String() != "OK\n" {
		t.Errorf("with APIARY_SOCK: %d %q %q, want OK", code, out.String(), errOut.String())
	}
}
