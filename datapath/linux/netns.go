package linux

import (
	"fmt"
	"runtime"

	"github.com/vishvananda/netns"
)

// inNetNS runs fn on a new thread in the network namespace ns and
// returns its error. The thread is not reused: the goroutine exits
// locked, and the runtime terminates the thread.
func inNetNS(ns netns.NsHandle, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// No UnlockOSThread: the thread leaves with the goroutine.
		if err := netns.Set(ns); err != nil {
			errc <- fmt.Errorf("enter network namespace: %w", err)
			return
		}
		errc <- fn()
	}()
	return <-errc
}

// inNetNSPath runs fn in the network namespace at path.
func inNetNSPath(path string, fn func() error) error {
	ns, err := netns.GetFromPath(path)
	if err != nil {
		return fmt.Errorf("open network namespace %s: %w", path, err)
	}
	defer ns.Close()
	return inNetNS(ns, fn)
}

// RunInNetNS runs fn in the network namespace at path, on a thread of its
// own, and returns its error; with path empty it runs fn in the caller's
// namespace. Other datapath packages (the BPF loader's attach by
// ifindex) use it to work in --datapath-netns.
func RunInNetNS(path string, fn func() error) error {
	if path == "" {
		return fn()
	}
	return inNetNSPath(path, fn)
}
