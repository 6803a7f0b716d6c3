// Command regionctl-demo provisions one region of the example fleet end to
// end on this machine (make demo): moto_server, the IAM gate in front of it
// and a local platform API, the central and regional pipelines with the
// real Terraform roots, what now exists, then cleanup. It is a program of
// its own so that the emulator and the gate are never linked into the
// shipped regionctl.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/regionctl/regionctl/internal/cli"
	"github.com/regionctl/regionctl/internal/demo"
)

func main() {
	var o demo.Options
	flag.StringVar(&o.Root, "root", ".", "the regionctl checkout: config/, charts/, pipelines/, terraform/")
	flag.StringVar(&o.Region, "region", "eu-west-1", "the region of the example fleet to provision")
	flag.BoolVar(&o.Keep, "keep", false, "keep the working copy with its logs and workspaces")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), `usage: regionctl-demo [--root DIR] [--region R] [--keep]

Starts moto_server (an AWS emulator) on a free 127.0.0.1 port and a local
platform API, renders a copy of the repository, runs the central and regional
pipelines for one region with the real Terraform roots and the aws provider,
prints what now exists (accounts and OUs, roles, buckets and state objects, EKS
clusters, registrations), then stops the emulator and removes the copy.

It needs moto_server and terraform on PATH and TF_CLI_CONFIG_FILE pointing at a
provider mirror; make demo sets that up with scripts/terraformrc.

`)
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(cli.ExitUsage)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	o.Regionctl = func(args ...string) int { return cli.Run(args, os.Stdout, os.Stderr) }
	if err := demo.Run(ctx, o, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "regionctl-demo: %v\n", err)
		os.Exit(cli.ExitExternal)
	}
}
