package api

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/apiary-net/apiary/cells/api/client"
)

// DefaultSocketPath is where the agent listens unless --socket-path says
// otherwise.
const DefaultSocketPath = client.DefaultSocketPath

// maxSocketPath is the longest path a unix socket address can hold
// (sun_path is 108 bytes including the terminating NUL).
const maxSocketPath = 107

// Config is the configuration of the api-server cell.
type Config struct {
	// SocketPath is the unix socket the REST API listens on.
	SocketPath string
}

// DefaultConfig holds the defaults of the api-server flags.
var DefaultConfig = Config{SocketPath: DefaultSocketPath}

// Flags registers --socket-path.
func (def Config) Flags(flags *pflag.FlagSet) {
	flags.String("socket-path", def.SocketPath, "Unix socket the REST API listens on")
}

// Validate checks that the socket path is absolute and fits in a unix
// socket address.
func (c *Config) Validate() error {
	switch {
	case c.SocketPath == "":
		return fmt.Errorf("--socket-path: must not be empty")
	case !filepath.IsAbs(c.SocketPath):
		return fmt.Errorf("--socket-path: %q is not an absolute path", c.SocketPath)
	case len(c.SocketPath) > maxSocketPath:
		return fmt.Errorf("--socket-path: %q is %d bytes long, more than the %d a unix socket path can hold",
			c.SocketPath, len(c.SocketPath), maxSocketPath)
	case c.SocketPath[len(c.SocketPath)-1] == '/':
		return fmt.Errorf("--socket-path: %q names a directory, not a socket file", c.SocketPath)
	}
	c.SocketPath = filepath.Clean(c.SocketPath)
	return nil
}
