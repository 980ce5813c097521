package kvstorecell_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/kvstore/kvstorecell"
)

// A named pipe or a device given as the etcd config file, or named in it
// as a TLS file, kept the agent from starting (reading a pipe blocks until
// a writer comes); now populate fails at once, naming the flag and file.
func TestCellConfigFilesThatAreNotFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "etcd.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	config := func(name, content string) string {
		path := filepath.Join(dir, name)
		must(t, os.WriteFile(path, []byte(content), 0o600))
		return path
	}
	caPipe := config("ca-pipe.yaml", "endpoints: [https://127.0.0.1:2379]\ntrusted-ca-file: "+fifo+"\n")
	certZero := config("cert-zero.yaml", "endpoints: [https://127.0.0.1:2379]\ncert-file: /dev/zero\nkey-file: /dev/zero\n")
	for _, tc := range []struct {
		name   string
		config string
		want   string
	}{
		{"config file is a named pipe", fifo, "--kvstore-opt: read etcd config: read " + fifo + ": not a regular file (named pipe)"},
		{"CA file is a named pipe", caPipe, "--kvstore-opt: etcd config " + caPipe + ": field trusted-ca-file: read " + fifo + ": not a regular file (named pipe)"},
		{"certificate is /dev/zero", certZero, "--kvstore-opt: etcd config " + certZero + ": fields cert-file/key-file: load client certificate /dev/zero: read /dev/zero: not a regular file (character device)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				_, err := celltest.Populate(t, []string{"kvstore=etcd", "kvstore-opt=etcd.config=" + tc.config,
					"socket-path=" + filepath.Join(t.TempDir(), "s.sock")}, api.Cell, status.Cell, kvstorecell.Cell)
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("Populate() = %v\nwant %q", err, tc.want)
				}
			case <-time.After(time.Minute):
				t.Fatal("Populate did not return within a minute")
			}
		})
	}
}
