// Package side is the protocol between meshbench and the processes it
// measures (apiaryside, kvstoremeshside): a side prints "ready <ns>" on
// stdout once it holds the whole remote cluster, then waits for "gc" on
// stdin, answers "heap <bytes>" (the live heap after a forced GC), and
// exits when stdin closes. The parent reads the side's RSS from
// /proc/<pid>/status between "ready" and "gc", so the forced GC does
// not change what it reads.
package side

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"time"
)

// Serve reports ready (the time the side took to get there) and
// answers the parent until stdin closes. With a memProfile path, it
// writes a heap profile there after the forced GC.
func Serve(ready time.Duration, memProfile string) {
	fmt.Printf("ready %d\n", ready.Nanoseconds())
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if in.Text() == "gc" {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			fmt.Fprintf(os.Stderr, "memstats before gc: HeapInuse %d MB, HeapIdle %d MB, HeapReleased %d MB, Stack %d MB, MSpan %d MB, GC %d MB, Other %d MB, NextGC %d MB\n",
				m.HeapInuse>>20, m.HeapIdle>>20, m.HeapReleased>>20, m.StackSys>>20, m.MSpanSys>>20, m.GCSys>>20, m.OtherSys>>20, m.NextGC>>20)
			runtime.GC()
			runtime.ReadMemStats(&m)
			if memProfile != "" {
				if err := writeHeapProfile(memProfile); err != nil {
					Fail("side", err)
				}
			}
			fmt.Printf("heap %d\n", m.HeapAlloc)
		}
	}
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("write heap profile: %w", err)
	}
	return f.Close()
}

// Fail reports err and exits.
func Fail(name string, err error) {
	fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
	os.Exit(1)
}
