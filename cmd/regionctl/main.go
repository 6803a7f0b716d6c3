// Command regionctl compiles the fleet config into deploy/ and runs the
// provisioning pipelines. See internal/cli.
package main

import (
	"os"

	// Advises the heap for huge pages before the other packages are
	// initialised (see there).
	_ "github.com/regionctl/regionctl/internal/hugeheap/atstart"

	"github.com/regionctl/regionctl/internal/cli"
)

func main() {
	cli.TuneGC()
	os.Exit(cli.Run(os.Args[1:], os.Stdout, os.Stderr))
}
