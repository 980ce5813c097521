package cli_test

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/apiary-net/apiary/cmd/apiary/cli"
)

// TestUnknownSubcommandFails: a misspelt command under any group exits
// non-zero and says what it did not know, at every level of the tree.
func TestUnknownSubcommandFails(t *testing.T) {
	tests := []struct {
		name     string
		give     []string
		wantCode int
		wantErr  string
	}{
		{name: "under root", give: []string{"polcy", "get"}, wantCode: 1, wantErr: `unknown command "polcy" for "apiary"`},
		{name: "typo with suggestion", give: []string{"policy", "gett"}, wantCode: 1, wantErr: `did you mean "get"?`},
		{name: "absent command", give: []string{"bpf", "nat", "list"}, wantCode: 1, wantErr: `unknown command "nat" for "apiary bpf"`},
		{name: "two levels down", give: []string{"bpf", "ipcache", "lst"}, wantCode: 1, wantErr: `did you mean "list"?`},
		{name: "unknown flag", give: []string{"endpoint", "list", "--bogus"}, wantCode: 1, wantErr: "unknown flag: --bogus"},
		{name: "group alone prints help", give: []string{"bpf"}, wantCode: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := cli.Execute(context.Background(), append([]string{"--socket", "/nonexistent"}, tt.give...), &out, &errOut)
			if code != tt.wantCode {
				t.Fatalf("apiary %v = %d, want %d (stderr %q)", tt.give, code, tt.wantCode, errOut.String())
			}
			if !strings.Contains(errOut.String(), tt.wantErr) {
				t.Errorf("stderr %q, want it to contain %q", errOut.String(), tt.wantErr)
			}
		})
	}
}

// TestEveryGroupRefusesUnknown walks the whole command tree: every
// command that groups others refuses an unknown argument.
func TestEveryGroupRefusesUnknown(t *testing.T) {
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		for _, sub := range c.Commands() {
			p := append(append([]string(nil), path...), sub.Name())
			if sub.HasSubCommands() {
				var out, errOut bytes.Buffer
				args := append([]string{"--socket", "/nonexistent"}, append(p, "no-such-command")...)
				if code := cli.Execute(context.Background(), args, &out, &errOut); code == 0 {
					t.Errorf("apiary %s no-such-command exits 0", strings.Join(p, " "))
				}
			}
			walk(sub, p)
		}
	}
	walk(cli.New(), nil)
}

// TestPolicyImportRefusesAPipe: `apiary policy import <fifo>` refuses the
// named pipe at once instead of blocking until someone writes to it.
func TestPolicyImportRefusesAPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "policy.yaml")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan int, 1)
	var errOut bytes.Buffer
	go func() {
		done <- cli.Execute(context.Background(), []string{"--socket", "/nonexistent", "policy", "import", fifo}, io.Discard, &errOut)
	}()
	select {
	case code := <-done:
		if code == 0 || !strings.Contains(errOut.String(), "not a regular file") {
			t.Fatalf("exit %d, stderr %q: want a refusal of the named pipe", code, errOut.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("apiary policy import blocked on a named pipe")
	}
}
