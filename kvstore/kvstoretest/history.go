package kvstoretest

import (
	"os"
	"path/filepath"
)

// The helpers below make etcd go back in time, as an operator does who
// restores it from a backup or starts it again with an empty data
// directory: the member keeps its name, peer URL and therefore its member
// and cluster ids, and its revisions start again below those clients saw.

// RestartEmpty stops the server, deletes its data and starts it again.
func (s *Server) RestartEmpty() {
	s.t.Helper()
	s.Stop()
	if err := os.RemoveAll(s.dataDir()); err != nil {
		s.t.Fatalf("kvstoretest: delete etcd data: %v", err)
	}
	s.Start()
}

// Backup is a copy of a server's data directory.
type Backup struct{ dir string }

// Backup stops the server, copies its data directory (a snapshot of its
// state) and starts it again.
func (s *Server) Backup() *Backup {
	s.t.Helper()
	s.Stop()
	b := &Backup{dir: filepath.Join(s.t.TempDir(), "data")}
	if err := os.CopyFS(b.dir, os.DirFS(s.dataDir())); err != nil {
		s.t.Fatalf("kvstoretest: back up etcd data: %v", err)
	}
	s.Start()
	return b
}

// Restore stops the server, replaces its data with the backup's and
// starts it again: everything written since the backup is gone, and
// revisions continue from the backup's.
func (s *Server) Restore(b *Backup) {
	s.t.Helper()
	s.Stop()
	if err := os.RemoveAll(s.dataDir()); err != nil {
		s.t.Fatalf("kvstoretest: delete etcd data: %v", err)
	}
	if err := os.CopyFS(s.dataDir(), os.DirFS(b.dir)); err != nil {
		s.t.Fatalf("kvstoretest: restore etcd data: %v", err)
	}
	s.Start()
}
