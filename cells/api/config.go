package api

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

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
	// APIReadHeaderTimeout bounds how long a client may take to send the
	// request line and headers.
	APIReadHeaderTimeout time.Duration
	// APIReadBodyTimeout bounds how long a client may take to send the
	// body of a request, from the end of its headers.
	APIReadBodyTimeout time.Duration
	// APIWriteTimeout bounds the time from the end of the headers to the
	// end of the answer: reading the body, running the handler and
	// writing the answer. Streaming handlers are exempt.
	APIWriteTimeout time.Duration
	// APIIdleTimeout closes a kept-alive connection that sends no new
	// request for this long.
	APIIdleTimeout time.Duration
	// APIMaxConnections caps the connections the server holds at once.
	APIMaxConnections int
}

// DefaultConfig holds the defaults of the api-server flags.
var DefaultConfig = Config{
	SocketPath:           DefaultSocketPath,
	APIReadHeaderTimeout: 10 * time.Second,
	APIReadBodyTimeout:   30 * time.Second,
	APIWriteTimeout:      60 * time.Second,
	APIIdleTimeout:       2 * time.Minute,
	APIMaxConnections:    256,
}

// Flags registers --socket-path and the --api-* limits.
func (def Config) Flags(flags *pflag.FlagSet) {
	flags.String("socket-path", def.SocketPath, "Unix socket the REST API listens on")
	flags.Duration("api-read-header-timeout", def.APIReadHeaderTimeout,
		"Close an API connection whose request line and headers take longer than this")
	flags.Duration("api-read-body-timeout", def.APIReadBodyTimeout,
		"Fail (400) and close an API request whose body takes longer than this to arrive")
	flags.Duration("api-write-timeout", def.APIWriteTimeout,
		"Cut an API answer not written this long after the request headers (streaming endpoints are exempt)")
	flags.Duration("api-idle-timeout", def.APIIdleTimeout,
		"Close a kept-alive API connection idle for this long")
	flags.Int("api-max-connections", def.APIMaxConnections,
		"Most API connections held at once; past it the connection waiting longest on its client is closed, "+
			"or the new one refused with 503 when every connection is being served")
}

// Validate checks that the socket path is absolute and fits in a unix
// socket address, and that the limits are positive and consistent.
func (c *Config) Validate() error {
	if err := c.validateSocket(); err != nil {
		return err
	}
	var errs []error
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{
		{"--api-read-header-timeout", c.APIReadHeaderTimeout},
		{"--api-read-body-timeout", c.APIReadBodyTimeout},
		{"--api-write-timeout", c.APIWriteTimeout},
		{"--api-idle-timeout", c.APIIdleTimeout},
	} {
		if d.v <= 0 {
			errs = append(errs, fmt.Errorf("%s: %s is not a positive duration", d.flag, d.v))
		}
	}
	if c.APIReadBodyTimeout > 0 && c.APIReadBodyTimeout >= c.APIWriteTimeout {
		errs = append(errs, fmt.Errorf("--api-read-body-timeout: %s is not shorter than --api-write-timeout %s, "+
			"which also counts from the end of the headers", c.APIReadBodyTimeout, c.APIWriteTimeout))
	}
	if c.APIMaxConnections < 1 {
		errs = append(errs, fmt.Errorf("--api-max-connections: %d is not a positive number", c.APIMaxConnections))
	}
	return errors.Join(errs...)
}

func (c *Config) validateSocket() error {
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
