package meshbench

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// procMemory is what /proc/<pid>/status says about a process's memory.
type procMemory struct {
	RSS, HWM uint64 // VmRSS and VmHWM (peak RSS), bytes
}

func readProcMemory(pid int) (procMemory, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return procMemory{}, fmt.Errorf("read memory of %d: %w", pid, err)
	}
	defer f.Close()
	var m procMemory
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		if !ok {
			continue
		}
		switch k {
		case "VmRSS":
			m.RSS = parseKB(v)
		case "VmHWM":
			m.HWM = parseKB(v)
		}
	}
	if m.RSS == 0 {
		return m, fmt.Errorf("read memory of %d: no VmRSS", pid)
	}
	return m, s.Err()
}

// parseKB parses "   1234 kB".
func parseKB(v string) uint64 {
	n, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
	return n << 10
}
