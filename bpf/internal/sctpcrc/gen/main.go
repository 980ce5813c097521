// Command gen writes lib/sctp_crc.h (sctpcrc.Header) under the current
// directory, bpf/: `go generate ./bpf` runs it before bpf2go.
//
// It may import only the standard library and apiary's bpf/internal
// packages (docs/design.md, Layers).
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/apiary-net/apiary/bpf/internal/sctpcrc"
)

func main() {
	if err := os.WriteFile(filepath.Join("lib", "sctp_crc.h"), sctpcrc.Header(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "sctpcrc gen:", err)
		os.Exit(1)
	}
}
