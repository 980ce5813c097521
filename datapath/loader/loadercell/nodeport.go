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

// nodePort attaches the NodePort programs to --devices with
// --enable-node-port, and detaches those a previous run left on devices
// no longer listed (or all of them without the flag). It runs in the
// datapath's network namespace.
func nodePort(log *slog.Logger, l *loader.Loader, c Config) error {
	want := []string{}
	if c.EnableNodePort {
		want = c.Devices
	}
	var errs []error
	pinned, _ := os.ReadDir(filepath.Dir(l.NetdevLinkDir("x")))
	for _, e := range pinned {
		if !slices.Contains(want, e.Name()) {
			errs = append(errs, l.DetachNodePort(e.Name()))
		}
	}
	for _, name := range want {
		lk, err := netlink.LinkByName(name)
		if err != nil {
			errs = append(errs, fmt.Errorf("--devices %s: %w", name, err))
			continue
		}
		if err := l.AttachNodePort(name, lk.Attrs().Index); err != nil {
			errs = append(errs, err)
			continue
		}
		log.Info("NodePort programs attached", "device", name)
	}
	return errors.Join(errs...)
}
