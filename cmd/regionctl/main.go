// Command regionctl compiles the fleet config into deploy/ and runs the
// provisioning pipelines. See internal/cli.
package main

import (
	"os"

	"github.com/regionctl/regionctl/internal/cli"
)

func main() {
	cli.TuneGC()
	os.Exit(cli.Run(os.Args[1:], os.Stdout, os.Stderr))
}
