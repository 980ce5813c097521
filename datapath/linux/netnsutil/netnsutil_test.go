package netnsutil_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
)

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		celltest.SkipUnprivileged(t, "network namespaces need root (CAP_SYS_ADMIN)")
	}
}

// current returns the identity of the calling thread's network namespace.
func current(t *testing.T) string {
	t.Helper()
	ns, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	return ns.UniqueId()
}

func TestRun(t *testing.T) {
	needRoot(t)
	ns, err := netnsutil.New()
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	t.Run("runs fn in the namespace", func(t *testing.T) {
		var links []netlink.Link
		err := netnsutil.Run(ns, func() error {
			var err error
			links, err = netlink.LinkList()
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(links) != 1 || links[0].Attrs().Name != "lo" {
			t.Errorf("links %v, want only lo in a new namespace", links)
		}
	})
	t.Run("returns fn's error", func(t *testing.T) {
		want := fmt.Errorf("boom")
		if err := netnsutil.Run(ns, func() error { return want }); err != want {
			t.Errorf("error %v, want %v", err, want)
		}
	})
	t.Run("new leaves the caller where it was", func(t *testing.T) {
		before := current(t)
		other, err := netnsutil.New()
		if err != nil {
			t.Fatal(err)
		}
		other.Close()
		if after := current(t); after != before {
			t.Errorf("namespace %s after New, want %s", after, before)
		}
	})
}

func TestRunOnCallingThread(t *testing.T) {
	needRoot(t)
	ns, err := netnsutil.New()
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	before := current(t)
	var inside string
	err = netnsutil.RunOnCallingThread(ns, func() error {
		inside = current(t)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if inside != ns.UniqueId() {
		t.Errorf("fn ran in %s, want %s", inside, ns.UniqueId())
	}
	if after := current(t); after != before {
		t.Errorf("namespace %s afterwards, want the caller's %s back", after, before)
	}
}

func TestNewNamed(t *testing.T) {
	needRoot(t)
	name := fmt.Sprintf("netnsutil-test-%d", os.Getpid())
	if err := netnsutil.NewNamed(name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = netns.DeleteNamed(name) })
	var up bool
	err := netnsutil.RunPath(filepath.Join("/var/run/netns", name), func() error {
		lo, err := netlink.LinkByName("lo")
		if err != nil {
			return err
		}
		up = lo.Attrs().Flags&net.FlagUp != 0
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !up {
		t.Error("lo is down in the new namespace, want up")
	}
}

// TestCookie: a namespace's cookie is the same read from any of its
// threads, and differs from another namespace's.
func TestCookie(t *testing.T) {
	needRoot(t)
	own, err := netnsutil.Cookie()
	if err != nil {
		t.Fatal(err)
	}
	if again, err := netnsutil.CookieAt(""); err != nil || again != own || own == 0 {
		t.Fatalf("CookieAt(\"\") = %d, %v; Cookie %d", again, err, own)
	}
	name := fmt.Sprintf("netnsutil-cookie-%d", os.Getpid())
	if err := netnsutil.NewNamed(name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = netns.DeleteNamed(name) })
	path := filepath.Join("/var/run/netns", name)
	other, err := netnsutil.CookieAt(path)
	if err != nil || other == own || other == 0 {
		t.Fatalf("cookie of %s = %d, %v; own %d", path, other, err, own)
	}
	if again, err := netnsutil.CookieAt(path); err != nil || again != other {
		t.Errorf("cookie of %s read again = %d, %v; want %d", path, again, err, other)
	}
	if _, err := netnsutil.CookieAt("/nonexistent"); err == nil {
		t.Error("a cookie of a path that is no namespace")
	}
}

// TestAll: every namespace once, one a child process is in among them,
// the excepted one not.
func TestAll(t *testing.T) {
	needRoot(t)
	child := exec.Command("sleep", "30")
	child.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		child.Process.Kill()
		child.Wait()
	})
	want, err := netnsutil.CookieAt(fmt.Sprintf("/proc/%d/ns/net", child.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	all, err := netnsutil.All("/proc/thread-self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	own, _ := netnsutil.Cookie()
	var cookies []uint64
	for _, p := range all {
		c, err := netnsutil.CookieAt(p)
		if err != nil {
			continue // the process exited
		}
		if c == own {
			t.Errorf("the excepted namespace listed: %s", p)
		}
		if slices.Contains(cookies, c) {
			t.Errorf("namespace %d listed twice (%s)", c, p)
		}
		cookies = append(cookies, c)
	}
	if !slices.Contains(cookies, want) {
		t.Errorf("the child's namespace %d is not among %v", want, cookies)
	}
	if _, err := netnsutil.All("/nonexistent"); err == nil {
		t.Error("All with an except path that is no namespace")
	}
}
