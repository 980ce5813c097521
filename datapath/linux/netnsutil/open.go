package netnsutil

import (
	"errors"
	"fmt"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// ErrNotNetNS is the error of Open for a path that is not a network
// namespace: a named pipe, a device, a directory, a plain file, or
// another kind of namespace (/proc/self/ns/mnt).
var ErrNotNetNS = errors.New("not a network namespace")

// nsGetNSType is the NS_GET_NSTYPE ioctl of <linux/nsfs.h>: the
// CLONE_NEW* flag of the namespace an nsfs file descriptor refers to.
const nsGetNSType = 0xb703

// Open opens the network namespace at path (a bind mount such as
// /var/run/netns/<name>, or /proc/<pid>/ns/net) without ever blocking:
// the file is opened non-blocking, so a named pipe a caller names cannot
// hang the agent, and it must be an nsfs file of a network namespace.
// The error wraps ErrNotNetNS when the file is something else.
func Open(path string) (netns.NsHandle, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return -1, fmt.Errorf("open %s: %w", path, err)
	}
	if err := checkNetNS(fd); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("%s: %w", path, err)
	}
	return netns.NsHandle(fd), nil
}

// checkNetNS checks that fd is an nsfs file of a network namespace.
func checkNetNS(fd int) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("stat: %w", err)
	}
	if kind := fileKind(st.Mode); kind != "" {
		return fmt.Errorf("%w (a %s)", ErrNotNetNS, kind)
	}
	var fs unix.Statfs_t
	if err := unix.Fstatfs(fd, &fs); err != nil {
		return fmt.Errorf("statfs: %w", err)
	}
	if fs.Type != unix.NSFS_MAGIC {
		return fmt.Errorf("%w (a file, not a namespace)", ErrNotNetNS)
	}
	typ, err := unix.IoctlRetInt(fd, nsGetNSType)
	if err != nil {
		return fmt.Errorf("ioctl NS_GET_NSTYPE: %w", err)
	}
	if typ != unix.CLONE_NEWNET {
		return fmt.Errorf("%w (another kind of namespace)", ErrNotNetNS)
	}
	return nil
}

// fileKind names the file type of mode when it cannot be a namespace
// (nsfs files are regular files), "" otherwise.
func fileKind(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return ""
	case unix.S_IFIFO:
		return "named pipe"
	case unix.S_IFCHR:
		return "character device"
	case unix.S_IFBLK:
		return "block device"
	case unix.S_IFDIR:
		return "directory"
	case unix.S_IFSOCK:
		return "socket"
	default:
		return "special file"
	}
}
