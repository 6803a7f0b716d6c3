// Command dist builds regionctl's release artifacts: one archive per
// platform with the version and commit stamped, a CycloneDX SBOM per binary,
// and SHA256SUMS over all of them. It then checks what it wrote, the way a
// user installing the release would (see verify.go).
//
// Without -version it builds a snapshot: a clean checkout of a v* tag is
// that release; anything else is <base>-snapshot.<commit>. `make dist` runs
// it; .ci/run checks every release build in snapshot mode.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

func main() {
	var cfg config
	flag.StringVar(&cfg.out, "out", "dist", "directory the artifacts are written to (replaced)")
	flag.StringVar(&cfg.version, "version", "", "release version (default: the v* tag of a clean checkout, else a snapshot version)")
	flag.StringVar(&cfg.targets, "targets", strings.Join(defaultTargets, ","), "os/arch pairs to build")
	flag.StringVar(&cfg.goCmd, "go", "go", "the go command")
	flag.StringVar(&cfg.signKey, "sign-key", "", "an SSH private key (ed25519) to sign SHA256SUMS with, into SHA256SUMS.sig (ssh-keygen -Y sign)")
	printChangelog := flag.Bool("changelog", false, "print CHANGELOG.md, as the archives carry it, and build nothing")
	flag.Parse()
	if *printChangelog {
		log, err := changelog(cfg.version)
		if err != nil {
			fmt.Fprintf(os.Stderr, "dist: %v\n", err)
			os.Exit(1)
		}
		os.Stdout.Write(log)
		return
	}
	if err := run(cfg); err != nil {
		fmt.Fprintf(os.Stderr, "dist: %v\n", err)
		os.Exit(1)
	}
}

// defaultTargets are the platforms a release ships.
var defaultTargets = []string{
	"linux/amd64", "linux/arm64",
	"darwin/amd64", "darwin/arm64",
	"windows/amd64", "windows/arm64",
}

type config struct {
	out, version, targets, goCmd, signKey string
}
