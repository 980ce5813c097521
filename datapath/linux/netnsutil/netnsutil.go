package netnsutil

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Run runs fn on a new OS thread in the network namespace ns and returns
// fn's error. The thread is never handed back to the runtime: its
// goroutine exits locked, and the runtime terminates it, so no other
// goroutine can run in ns by accident.
func Run(ns netns.NsHandle, fn func() error) error {
	return run(ns, "", fn)
}

// run is Run; name, when set, names the namespace in the error of
// entering it.
func run(ns netns.NsHandle, name string, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // no UnlockOSThread: the thread leaves with the goroutine
		if err := netns.Set(ns); err != nil {
			if name != "" {
				name = " " + name
			}
			errc <- fmt.Errorf("enter network namespace%s: %w", name, err)
			return
		}
		errc <- fn()
	}()
	return <-errc
}

// RunPath is Run in the network namespace at path (a bind mount such as
// /var/run/netns/<name> or /proc/<pid>/ns/net); fn's error is returned
// as it is.
func RunPath(path string, fn func() error) error {
	ns, err := Open(path)
	if err != nil {
		return fmt.Errorf("open network namespace: %w", err)
	}
	defer ns.Close()
	return run(ns, path, fn)
}

// RunOnCallingThread runs fn on the calling goroutine with its thread
// locked and moved into ns, then moves the thread back and unlocks it.
// It is for test bodies, which must run on the test's goroutine to call
// t.Fatal (fn may exit the goroutine: the thread is still moved back).
// When the thread cannot be moved back it stays locked, so that the
// runtime terminates it with the goroutine instead of reusing it in ns.
func RunOnCallingThread(ns netns.NsHandle, fn func() error) (err error) {
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("open the current network namespace: %w", err)
	}
	defer orig.Close()
	if err := netns.Set(ns); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("enter network namespace: %w", err)
	}
	defer func() {
		if rerr := netns.Set(orig); rerr != nil {
			err = errors.Join(err, fmt.Errorf("restore network namespace: %w", rerr))
			return // the thread stays locked and dies with the goroutine
		}
		runtime.UnlockOSThread()
	}()
	return fn()
}

// New creates an unnamed network namespace and returns a handle to it,
// which the caller closes; the namespace lives while a handle or a
// process holds it. The caller's thread stays where it is.
func New() (netns.NsHandle, error) {
	var ns netns.NsHandle
	err := onNewThread(func() error {
		var err error
		ns, err = netns.New()
		return err
	})
	if err != nil {
		return -1, fmt.Errorf("create network namespace: %w", err)
	}
	return ns, nil
}

// NewNamed creates the network namespace name, bind-mounted at
// /var/run/netns/<name> as `ip netns add` does, with its loopback up.
// The caller's thread stays where it is; netns.DeleteNamed removes it.
func NewNamed(name string) error {
	err := onNewThread(func() error {
		ns, err := netns.NewNamed(name)
		if err != nil {
			return err
		}
		ns.Close()
		lo, err := netlink.LinkByName("lo")
		if err != nil {
			return err
		}
		return netlink.LinkSetUp(lo)
	})
	if err != nil {
		return fmt.Errorf("create network namespace %s: %w", name, err)
	}
	return nil
}

// Enter moves the calling goroutine's thread into the network namespace
// at path for good: the thread stays locked. It is for a process about
// to exec a program in that namespace (syscall.Exec keeps the thread's
// namespace); anything else should use Run.
func Enter(path string) error {
	ns, err := Open(path)
	if err != nil {
		return fmt.Errorf("open network namespace: %w", err)
	}
	defer ns.Close()
	runtime.LockOSThread() // never unlocked: the thread now belongs to ns
	if err := netns.Set(ns); err != nil {
		return fmt.Errorf("enter network namespace %s: %w", path, err)
	}
	return nil
}

// onNewThread runs fn on a new OS thread that is dropped afterwards,
// for work that moves its thread (netns.New and netns.NewNamed do).
func onNewThread(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // no UnlockOSThread: the thread leaves with the goroutine
		errc <- fn()
	}()
	return <-errc
}

// Cookie returns the cookie of the calling thread's network namespace,
// as BPF's bpf_get_netns_cookie gives it (SO_NETNS_COOKIE of a socket
// made there; Linux 5.14). Call it on a thread locked in the namespace
// (Run), or on any thread for the process's own namespace.
func Cookie() (uint64, error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("network namespace cookie: %w", err)
	}
	defer unix.Close(fd)
	c, err := unix.GetsockoptUint64(fd, unix.SOL_SOCKET, unix.SO_NETNS_COOKIE)
	if err != nil {
		return 0, fmt.Errorf("network namespace cookie: %w", err)
	}
	return c, nil
}

// CookieAt returns the cookie of the network namespace at path (Cookie
// run there), or of the calling thread's when path is empty.
func CookieAt(path string) (uint64, error) {
	if path == "" {
		return Cookie()
	}
	var c uint64
	err := RunPath(path, func() (err error) {
		c, err = Cookie()
		return err
	})
	return c, err
}

// All returns one path per network namespace a process of the machine
// is in (/proc/<pid>/ns/net of one of its processes), the namespace of
// except (a path; "": none) left out. Processes that exit meanwhile are
// skipped.
func All(except string) ([]string, error) {
	type id struct{ dev, ino uint64 }
	idOf := func(path string) (id, bool) {
		var st unix.Stat_t
		if unix.Stat(path, &st) != nil {
			return id{}, false
		}
		return id{uint64(st.Dev), st.Ino}, true
	}
	seen := map[id]bool{}
	if except != "" {
		x, ok := idOf(except)
		if !ok {
			return nil, fmt.Errorf("network namespaces: %s is not one", except)
		}
		seen[x] = true
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("network namespaces: %w", err)
	}
	var out []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		path := "/proc/" + e.Name() + "/ns/net"
		if x, ok := idOf(path); ok && !seen[x] {
			seen[x] = true
			out = append(out, path)
		}
	}
	return out, nil
}
