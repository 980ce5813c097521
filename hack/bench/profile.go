package bench

import (
	"fmt"
	"os"
	"runtime/pprof"
	"sync"
)

// CPUProfile starts a CPU profile of the whole process into path when
// path is not empty (a -cpuprofile flag); the returned stop ends it and
// is safe to call more than once (before an os.Exit and deferred).
func CPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpuprofile: %w", err)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			pprof.StopCPUProfile()
			f.Close()
		})
	}, nil
}
