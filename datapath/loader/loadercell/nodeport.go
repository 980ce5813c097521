package loadercell

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"

	"github.com/apiary-net/apiary/datapath/loader"
)

// nodePort attaches the NodePort programs to the chosen devices (want),
// and, when the choice is known (a reading of the devices succeeded,
// or NodePort is off), detaches those a previous run (or choice) left on
// devices no longer chosen: an agent whose first detection failed
// leaves the earlier run's programs where they are until it knows. A
// device of prev, attached at its index before, is left as it is. It
// runs in the datapath's network namespace and returns the devices it
// attached (or left).
func nodePort(log *slog.Logger, l *loader.Loader, want, prev []netDevice, known bool) ([]netDevice, error) {
	var errs []error
	if known {
		pinned, err := os.ReadDir(filepath.Dir(l.NetdevLinkDir("x")))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("read the NodePort programs' links: %w", err))
		}
		for _, e := range pinned {
			if slices.ContainsFunc(want, func(d netDevice) bool { return d.name == e.Name() }) {
				continue
			}
			if err := l.DetachNodePort(e.Name()); err != nil {
				errs = append(errs, fmt.Errorf("detach from %s: %w", e.Name(), err))
				continue
			}
			log.Info("NodePort programs detached", "device", e.Name())
		}
	}
	var done []netDevice
	for _, d := range want {
		if slices.Contains(prev, d) { // attached at this index before
			done = append(done, d)
			continue
		}
		if err := l.AttachNodePort(d.name, d.index); err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, d)
		log.Info("NodePort programs attached", "device", d.name)
	}
	return done, errors.Join(errs...)
}

// deviceNames returns the devices' names.
func deviceNames(ds []netDevice) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.name
	}
	return out
}
