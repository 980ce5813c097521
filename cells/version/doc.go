// Package version tells which apiary build is running: the release
// version (set at link time), the Go toolchain and the VCS commit recorded
// by the Go build, and when the process started.
//
// The agent reports it in `apiary-agent --version`, in the "Agent" line
// of `apiary status` and on GET /v1/version; the CLI prints its own and the
// agent's with `apiary version`.
//
// It is a leaf (docs/design.md, Layers): any package may import it, and it
// may import only the standard library, third-party modules and the other
// leaves (cells/localnode/cluster, cells/api/models, cells/api/client and
// cells/version).
package version
