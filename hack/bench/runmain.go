package bench

import (
	"os"
	"testing"

	"github.com/apiary-net/apiary/cells/celltest"
)

// RunMain runs a benchmark program's main once with args (tiny sizes),
// as its test: the program measures, prints its report and returns, or
// fails the test by exiting non-zero. needRoot marks programs that load
// BPF programs or maps; they skip (or fail, with
// APIARY_TEST_REQUIRE_PRIVILEGED=1) without root.
func RunMain(t *testing.T, main func(), needRoot bool, args ...string) {
	t.Helper()
	if needRoot && os.Geteuid() != 0 {
		celltest.SkipUnprivileged(t, "the benchmark loads BPF programs and maps: needs root")
	}
	saved := os.Args
	t.Cleanup(func() { os.Args = saved })
	os.Args = append([]string{saved[0]}, args...)
	main()
}
