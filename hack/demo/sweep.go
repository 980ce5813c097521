package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vishvananda/netns"
)

// Where the lab keeps its files and its agents' pins.
const (
	labDir = "/run/apiary-lab"
	bpfDir = "/sys/fs/bpf/apiary-lab"
)

// sweep removes everything a lab leaves on the machine, from this run or
// an earlier one that was killed: the processes in the lab's network
// namespaces (pods' servers first, then the agents, the outside host and
// the etcds), the namespaces (their veths and the bridge go with them),
// the agents' pinned maps and links, and the lab directory. It says what
// it removed on w when there was anything.
func sweep(w io.Writer) error {
	names := labNetNS()
	slices.SortStableFunc(names, func(a, b string) int { return sweepRank(a) - sweepRank(b) })
	killRanks(names)
	var errs []string
	for _, name := range names {
		if err := netns.DeleteNamed(name); err != nil {
			errs = append(errs, fmt.Sprintf("delete network namespace %s: %v", name, err))
		}
	}
	_, bpfErr := os.Stat(bpfDir)
	_, dirErr := os.Stat(labDir)
	for _, dir := range []string{bpfDir, labDir} {
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, fmt.Sprintf("remove %s: %v", dir, err))
		}
	}
	if w != nil && (len(names) > 0 || bpfErr == nil || dirErr == nil) {
		fmt.Fprintf(w, "Removed the lab: %d network namespaces, %s, %s\n", len(names), bpfDir, labDir)
	}
	if len(errs) > 0 {
		return fmt.Errorf("sweep the lab: %s", strings.Join(errs, "; "))
	}
	return nil
}

// killRanks ends the processes of the namespaces, sorted by sweepRank:
// the namespaces of one rank at the same time, each rank after the one
// before has ended.
func killRanks(names []string) {
	for len(names) > 0 {
		n := 1
		for n < len(names) && sweepRank(names[n]) == sweepRank(names[0]) {
			n++
		}
		var wg sync.WaitGroup
		for _, name := range names[:n] {
			wg.Go(func() { killIn(nsPath(name), 15*time.Second) })
		}
		wg.Wait()
		names = names[n:]
	}
}

// sweepRank orders the namespaces: pods, nodes, the outside host, the
// lab namespace with the etcds last (the agents stop while their etcd
// still answers).
func sweepRank(name string) int {
	switch {
	case strings.HasPrefix(name, labPrefix+"-pod"):
		return 0
	case name == labPrefix:
		return 3
	case name == labPrefix+"-outside":
		return 2
	default:
		return 1
	}
}
