package cmd

import (
	"fmt"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/apiary-net/apiary/datapath/maps/bpfmap"
)

// newMountBPFFSCommand is `apiary-agent mount-bpf-fs`, the DaemonSet's
// first init container (Cilium's mount-bpf-fs): it mounts a bpffs on
// the host's /sys/fs/bpf unless one is there, so that the maps and links
// the agent pins outlive its container (the volume's Bidirectional
// propagation carries the mount to the host). Running it again changes
// nothing.
func newMountBPFFSCommand() *cobra.Command {
	var path string
	c := &cobra.Command{
		Use:   "mount-bpf-fs",
		Short: "Mount a bpffs on --path unless one is mounted there",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			mounted, err := mountBPFFS(path)
			if err != nil {
				return err
			}
			if mounted {
				fmt.Fprintf(cmd.OutOrStdout(), "Mounted a bpffs on %s\n", path)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "%s is a bpffs already\n", path)
			}
			return nil
		},
	}
	c.Flags().StringVar(&path, "path", bpfmap.SysFSBPF, "Directory to mount the bpffs on")
	return c
}

// mountBPFFS mounts a bpffs on path unless path is on one; it says
// whether it mounted.
func mountBPFFS(path string) (bool, error) {
	onBPFFS, err := bpfmap.IsBPFFS(path)
	if err != nil {
		return false, fmt.Errorf("mount-bpf-fs: %w", err)
	}
	if onBPFFS {
		return false, nil
	}
	if err := unix.Mount("bpffs", path, "bpf", 0, ""); err != nil {
		return false, fmt.Errorf("mount-bpf-fs: mount bpffs on %s: %w", path, err)
	}
	return true, nil
}
