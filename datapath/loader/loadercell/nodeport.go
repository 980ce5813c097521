package loadercell

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"

	"github.com/vishvananda/netlink"

	"github.com/apiary-net/apiary/datapath/loader"
)

// nodePort attaches the NodePort programs to the chosen devices (want),
// and detaches those a previous run (or choice) left on devices no
// longer chosen. A device of prev, attached at its index before, is left
// as it is; a device without an index (--devices as listed) is looked
// up. It runs in the datapath's network namespace and returns the
// devices it attached (or left).
func nodePort(log *slog.Logger, l *loader.Loader, want, prev []netDevice) ([]netDevice, error) {
	var errs []error
	pinned, _ := os.ReadDir(filepath.Dir(l.NetdevLinkDir("x")))
	for _, e := range pinned {
		if !slices.ContainsFunc(want, func(d netDevice) bool { return d.name == e.Name() }) {
			errs = append(errs, l.DetachNodePort(e.Name()))
			log.Info("NodePort programs detached", "device", e.Name())
		}
	}
	var done []netDevice
	for _, d := range want {
		if d.index != 0 && slices.Contains(prev, d) {
			done = append(done, d)
			continue
		}
		index := d.index
		if index == 0 {
			lk, err := netlink.LinkByName(d.name)
			if err != nil {
				errs = append(errs, fmt.Errorf("--devices %s: %w", d.name, err))
				continue
			}
			index = lk.Attrs().Index
		}
		if err := l.AttachNodePort(d.name, index); err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, netDevice{d.name, index})
		log.Info("NodePort programs attached", "device", d.name)
	}
	return done, errors.Join(errs...)
}
