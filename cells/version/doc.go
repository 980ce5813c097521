// Package version tells which apiary build is running: the release
// version (set at link time), the Go toolchain and the VCS commit recorded
// by the Go build, and when the process started.
//
// The agent reports it in `apiary-agent --version`, in the "Agent" line
// of `apiary status` and on GET /v1/version; the CLI prints its own and the
// agent's with `apiary version`.
package version
