// Package safefile reads the files an operator points the agent at (a
// --policy-dir file, the etcd config file and the TLS files it names, a
// simulation scenario; later ClusterMesh and CNI config files) without
// letting a wrong path take the agent down.
//
// A path may name anything: a named pipe (reading it blocks until a
// writer comes, forever), a symlink to /dev/zero or /dev/urandom (reading
// it never ends), a socket, a directory, a huge file. Read accepts only a
// regular file, after following symlinks, of at most a given size. It
// checks the type before opening; it opens with O_NONBLOCK, so that a
// file swapped for a pipe in between does not block the open, then checks
// the type again on the open descriptor; it reads at most the size limit
// plus one byte, so a file that grows (or a /proc file that claims size 0)
// is cut off; and it gives up after a timeout, so a hung network or FUSE
// mount does not hold the caller. Every refusal is an error naming the
// path and the reason, matching ErrNotRegular, ErrTooLarge or
// os.ErrDeadlineExceeded.
//
// WriteFile is the other half, for the state the agent keeps itself: it
// replaces a file atomically (temporary file, fsync, rename, fsync of the
// directory), so a crash leaves the old content or the new one.
//
// The package is a leaf: it imports only the standard library.
package safefile
