package plugin

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"syscall"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/version"

	"github.com/apiary-net/apiary/cells/api/client"
	apiaryversion "github.com/apiary-net/apiary/cells/version"
)

// supportedVersions are the CNI spec versions the plugin speaks; results
// are converted to the configuration's.
var supportedVersions = version.PluginSupports("0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0")

// Main runs the command the runtime asked for (CNI_COMMAND) and exits;
// `apiary-cni install [flags]` installs the plugin and its conflist.
func Main() {
	if len(os.Args) > 1 && os.Args[1] == "install" {
		os.Exit(runInstall(os.Args[2:], os.Stderr))
	}
	skel.PluginMainFuncs(skel.CNIFuncs{Add: cmdAdd, Del: cmdDel, Check: cmdCheck, Status: cmdStatus, GC: cmdGC},
		supportedVersions, "apiary-cni "+apiaryversion.Version+": attaches containers to apiary-agent")
}

// command is what every command starts from: the configuration, a
// logger, a client of the agent and a deadline.
type command struct {
	conf   *NetConf
	log    *slog.Logger
	client *client.Client
	ctx    context.Context
	close  func()
}

// start parses the configuration and opens the log and the client.
func start(op string, args *skel.CmdArgs) (*command, error) {
	conf, err := parseConfig(args.StdinData)
	if err != nil {
		return nil, err
	}
	log, closeLog := openLog(conf)
	log = log.With("command", op, "container", args.ContainerID, "ifname", args.IfName)
	ctx, cancel := context.WithTimeout(context.Background(), conf.timeout)
	c := client.New(conf.SocketPath)
	return &command{conf: conf, log: log, client: c, ctx: ctx, close: func() {
		c.Close()
		cancel()
		closeLog()
	}}, nil
}

// fail logs err and returns it as a CNI error.
func (c *command) fail(op string, err error) error {
	cerr := cniError(op, c.conf.SocketPath, err)
	c.log.Error("Command failed", "error", cerr)
	return cerr
}

// openLog opens the configured log file (appending); without one the
// plugin logs nothing: its stdout is the result and its stderr goes to
// the runtime's log, so warnings go there.
func openLog(conf *NetConf) (*slog.Logger, func()) {
	if conf.LogFile == "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})), func() {}
	}
	f, err := openLogFile(conf.LogFile)
	if err != nil {
		l := slog.New(slog.NewTextHandler(os.Stderr, nil))
		l.Warn("Cannot open the log file; logging to stderr", "log-file", conf.LogFile, "error", err)
		return l, func() {}
	}
	var w io.Writer = f
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: conf.logLevel})), func() { f.Close() }
}

// openLogFile opens path for appending without blocking: a named pipe
// (with no reader, or with one) or a device is refused, so that a
// configuration naming one cannot hang the runtime's CNI call.
func openLogFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%s: not a regular file (%s)", path, st.Mode().Type())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
