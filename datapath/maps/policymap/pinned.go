package policymap

import (
	"fmt"
	"path/filepath"

	"github.com/cilium/ebpf"
)

// OpenPinned opens endpoint epID's pinned policy map read-only, for
// inspection (`apiary bpf policy get`); unlike Open it never creates nor
// replaces the map. An endpoint without a pinned map is an error that
// wraps os.ErrNotExist.
func OpenPinned(root string, epID uint16) (*Map, error) {
	path := filepath.Join(root, PinName(epID))
	m, err := ebpf.LoadPinnedMap(path, &ebpf.LoadPinOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("open policy map of endpoint %d: %w", epID, err)
	}
	return &Map{m: m, epID: epID, path: path}, nil
}
