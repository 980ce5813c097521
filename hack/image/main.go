package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
)

func main() {
	var o Options
	flag.StringVar(&o.Root, "root", "../..", "The repository's root directory")
	flag.StringVar(&o.Out, "out", "../../_output/image/apiary.tar", "The docker archive to write")
	flag.StringVar(&o.Tag, "tag", "", "The image reference (default: the image of install/kubernetes/daemonset.yaml)")
	flag.StringVar(&o.Version, "version", "dev", "The version linked into the binaries and put in the labels")
	flag.StringVar(&o.Revision, "revision", "", "The source revision for the org.opencontainers.image.revision label")
	flag.StringVar(&o.Created, "created", "", "RFC 3339 creation time of the image (default: the Unix epoch, for a reproducible image)")
	flag.StringVar(&o.Arch, "arch", runtime.GOARCH, "GOARCH of the binaries and the image")
	flag.StringVar(&o.CACerts, "ca-certs", DefaultCACerts, "The CA bundle to put in the image")
	flag.Parse()
	o.Log = os.Stderr
	ref, err := Build(context.Background(), o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "image: wrote %s (%s)\n", o.Out, ref)
}
