package main

import (
	"context"
	"os"

	"github.com/apiary-net/apiary/cmd/apiary/cli"
)

func main() {
	os.Exit(cli.Execute(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}
