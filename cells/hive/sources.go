package hive

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// Where a flag's value came from, as shown by Print.
const (
	SourceFlag      = "flag"
	SourceEnv       = "env"
	SourceConfigDir = "config-dir"
	SourceDefault   = "default"
)

// EnvName returns the environment variable that sets a flag:
// --foo-bar -> APIARY_FOO_BAR (with the default prefix).
func EnvName(prefix, flag string) string {
	return prefix + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// applySources fills the flags not set on the command line from the
// environment and then from the config dir. It returns the source of every
// flag and the config dir files that match no flag.
func applySources(fs *pflag.FlagSet, envPrefix string) (map[string]string, []string, error) {
	sources := map[string]string{}
	var errs []error
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Changed {
			sources[f.Name] = SourceFlag
			return
		}
		sources[f.Name] = SourceDefault
		env := EnvName(envPrefix, f.Name)
		if v, ok := os.LookupEnv(env); ok {
			if err := fs.Set(f.Name, v); err != nil {
				errs = append(errs, fmt.Errorf("environment variable %s (flag --%s): %w", env, f.Name, err))
				return
			}
			sources[f.Name] = SourceEnv
		}
	})
	if len(errs) > 0 {
		return nil, nil, errs[0]
	}
	dir := ""
	if f := fs.Lookup("config-dir"); f != nil {
		dir = f.Value.String()
	}
	if dir == "" {
		return sources, nil, nil
	}
	unknown, err := applyConfigDir(fs, dir, sources)
	return sources, unknown, err
}

// applyConfigDir reads one file per flag from dir. Files whose names start
// with a dot (Kubernetes' ..data links) and directories are skipped.
func applyConfigDir(fs *pflag.FlagSet, dir string, sources map[string]string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read --config-dir %s: %w", dir, err)
	}
	var unknown []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		path := filepath.Join(dir, name)
		info, err := os.Stat(path) // follows the ConfigMap symlinks
		if err != nil {
			return nil, fmt.Errorf("config dir file %s: %w", path, err)
		}
		if info.IsDir() {
			continue
		}
		f := fs.Lookup(name)
		if f == nil {
			unknown = append(unknown, name)
			continue
		}
		if sources[name] != SourceDefault {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("config dir file %s: %w", path, err)
		}
		if err := fs.Set(name, strings.TrimSpace(string(data))); err != nil {
			return nil, fmt.Errorf("config dir file %s (flag --%s): %w", path, name, err)
		}
		sources[name] = SourceConfigDir
	}
	slices.Sort(unknown)
	return unknown, nil
}
