package linux

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// writeSysctl sets a sysctl of the calling thread's network namespace:
// name is the dotted name, "net.ipv4.ip_forward". An unchanged value is
// not written.
func writeSysctl(name, value string) error {
	path := filepath.Join("/proc/sys", strings.ReplaceAll(name, ".", "/"))
	if cur, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(cur)) == value {
		return nil
	}
	if err := os.WriteFile(path, []byte(value), 0o644); err != nil {
		return fmt.Errorf("set sysctl %s=%s: %w", name, value, err)
	}
	return nil
}
