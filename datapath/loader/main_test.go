package loader_test

import (
	"os"
	"testing"
)

// TestMain runs the socket-level balancer test's client when the test
// binary is started as that client (sockClientEnv set), else the tests.
func TestMain(m *testing.M) {
	if spec := os.Getenv(sockClientEnv); spec != "" {
		os.Exit(sockClient(spec))
	}
	os.Exit(m.Run())
}
