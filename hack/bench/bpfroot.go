package bench

import (
	"errors"
	"fmt"
	"os"

	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"

	"github.com/apiary-net/apiary/datapath/maps/bpfmap"
)

// BPFRoot lifts the memlock limit and mounts a bpffs on a new temporary
// directory named after prefix, for a benchmark's pinned maps; done
// unmounts and removes it.
func BPFRoot(prefix string) (root string, done func(), err error) {
	if err := rlimit.RemoveMemlock(); err != nil {
		return "", nil, fmt.Errorf("remove memlock limit: %w", err)
	}
	root, err = os.MkdirTemp("", prefix)
	if err != nil {
		return "", nil, err
	}
	if err := bpfmap.EnsureRoot(root); err != nil {
		return "", nil, errors.Join(err, os.RemoveAll(root))
	}
	return root, func() {
		_ = unix.Unmount(root, unix.MNT_DETACH)
		_ = os.RemoveAll(root)
	}, nil
}
