package plugin

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/apiary-net/apiary/cells/safefile"

	"github.com/apiary-net/apiary/cells/api/client"
)

// The defaults of `apiary-cni install`: the directories kubelet's
// runtimes (containerd, CRI-O) read, and apiary's conflist name.
const (
	DefaultBinDir      = "/opt/cni/bin"
	DefaultConfDir     = "/etc/cni/net.d"
	DefaultConfName    = "05-apiary.conflist"
	DefaultNetworkName = "apiary"
)

// Conflist is the network configuration list of the apiary network
// (cniVersion 1.1.0) with the plugin talking to the agent at socket and
// logging to logFile (none when empty).
func Conflist(socket, logFile string) ([]byte, error) {
	plugin := map[string]any{"type": PluginType, "socket-path": socket}
	if logFile != "" {
		plugin["log-file"] = logFile
	}
	data, err := json.MarshalIndent(map[string]any{
		"cniVersion": "1.1.0", "name": DefaultNetworkName, "plugins": []any{plugin},
	}, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode conflist: %w", err)
	}
	return append(data, '\n'), nil
}

// runInstall is `apiary-cni install`: it copies the running binary into
// the CNI bin dir and, unless --cni-conf-dir is empty, writes the
// conflist into the CNI conf dir, each
// atomically (a runtime running the old plugin, or reading the old
// conflist, sees the old or the new file, never a part), and only when
// the file differs: running it again changes nothing. The DaemonSet's
// init container runs it on every node. Each flag's default may come
// from APIARY_<FLAG> (APIARY_CNI_BIN_DIR, ...); a flag given wins.
func runInstall(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("apiary-cni install", flag.ContinueOnError)
	fs.SetOutput(stderr)
	binDir := fs.String("cni-bin-dir", envOr("cni-bin-dir", DefaultBinDir), "Directory the runtime finds CNI plugins in")
	confDir := fs.String("cni-conf-dir", envOr("cni-conf-dir", DefaultConfDir), "Directory the runtime reads network configurations from (empty: install the binary only, apiary-agent --write-cni-conf-when-ready writes the conflist)")
	confName := fs.String("cni-conf-name", envOr("cni-conf-name", DefaultConfName), "File name of the conflist in --cni-conf-dir")
	socket := fs.String("socket-path", envOr("socket-path", client.DefaultSocketPath), "The agent's API socket, as the host sees it")
	logFile := fs.String("log-file", envOr("log-file", ""), "Log file of the plugin (none when empty)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := install(*binDir, *confDir, *confName, *socket, *logFile); err != nil {
		fmt.Fprintln(stderr, "apiary-cni install:", err)
		return 1
	}
	fmt.Fprintf(stderr, "apiary-cni install: installed %s\n", filepath.Join(*binDir, PluginType))
	if *confDir != "" {
		fmt.Fprintf(stderr, "apiary-cni install: installed %s\n", filepath.Join(*confDir, *confName))
	}
	return 0
}

func install(binDir, confDir, confName, socket, logFile string) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the running binary: %w", err)
	}
	bin, err := os.ReadFile(self)
	if err != nil {
		return fmt.Errorf("read the running binary: %w", err)
	}
	if err := writeAtomic(filepath.Join(binDir, PluginType), bin, 0o755); err != nil {
		return fmt.Errorf("install plugin: %w", err)
	}
	if confDir == "" {
		return nil
	}
	return WriteConflist(filepath.Join(confDir, confName), socket, logFile)
}

// WriteConflist writes the conflist of Conflist to path atomically
// (apiary-agent's --write-cni-conf-when-ready).
func WriteConflist(path, socket, logFile string) error {
	conf, err := Conflist(socket, logFile)
	if err != nil {
		return err
	}
	if err := writeAtomic(path, conf, 0o644); err != nil {
		return fmt.Errorf("write conflist: %w", err)
	}
	return nil
}

// envOr returns $APIARY_<FLAG> (set, even empty: an empty
// APIARY_CNI_CONF_DIR installs the binary only), or def.
func envOr(flag, def string) string {
	if v, ok := os.LookupEnv("APIARY_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))); ok {
		return v
	}
	return def
}

// writeAtomic replaces path with data (a crash leaves the old file or
// the new one), creating its directory if needed; a file that has data
// and mode already is left as it is.
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() && st.Mode().Perm() == mode {
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
			return nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return safefile.WriteFile(path, data, mode)
}
