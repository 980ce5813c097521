package cli_test

import (
	"context"
	"io"

	"github.com/apiary-net/apiary/cmd/apiary/cli"
)

func runWithoutSocketFlag(stdout, stderr io.Writer, args ...string) int {
	return cli.Execute(context.Background(), args, stdout, stderr)
}
