// Command image builds the regionctl runner image, the one every Tekton
// Task and the reconcile CronJob run, into an OCI image layout, without a
// container daemon:
//
//	go run . -out DIR -regionctl BIN -terraform BIN -terraform-version V \
//	    -mirror DIR -argocd-manifests FILE -certs FILE -repository NAME \
//	    [-tag TAG] [-epoch SECONDS]
//
// The image is tagged TAG (default: regionctl's version) and, when
// regionctl was built from a commit's own sources, sha-<12 hex digits of
// the commit>.
//
// The image has no operating system: four layers hold the CA
// certificates, /etc/passwd with the non-root user 65532 and Terraform's CLI
// configuration; terraform and the provider mirror the roots are locked to;
// Argo CD's install manifests, which clusters' bootstrap tasks apply; and
// regionctl. Both binaries must be static. The same inputs give the
// same digest: entries are sorted, owned by root, stamped with -epoch, and
// compressed by one deterministic gzip.
//
// make image runs it with the repository's pins; it prints the reference
// by digest that gitops.runner_image takes.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

func main() {
	var o Options
	flag.StringVar(&o.Out, "out", "", "OCI image layout directory to write (replaced whole)")
	flag.StringVar(&o.Regionctl, "regionctl", "", "static regionctl binary (CGO_ENABLED=0)")
	flag.StringVar(&o.Terraform, "terraform", "", "static terraform binary")
	flag.StringVar(&o.TerraformVersion, "terraform-version", "", "the terraform version the image must hold")
	flag.StringVar(&o.Mirror, "mirror", "", "Terraform provider filesystem mirror (registry.terraform.io/...)")
	flag.StringVar(&o.ArgoCDManifests, "argocd-manifests", "", "Argo CD's install.yaml (regionctl dev argocd-manifests -o FILE)")
	flag.StringVar(&o.Certs, "certs", "/etc/ssl/certs/ca-certificates.crt", "CA certificate bundle (PEM)")
	flag.StringVar(&o.Repository, "repository", "", "image repository, e.g. registry.example.com/platform/regionctl")
	flag.StringVar(&o.Tag, "tag", "", "tag of the image in the layout's index (default: regionctl's version)")
	flag.Int64Var(&o.Epoch, "epoch", 0, "timestamp of every file and of the image, in seconds since 1970 (SOURCE_DATE_EPOCH)")
	flag.Parse()
	if flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "image: no arguments are taken; see -help")
		os.Exit(2)
	}
	res, err := Build(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
	fmt.Printf("wrote %s: %s (tags %s), %d layers, %.0f MiB compressed, %.0f MiB unpacked\n", o.Out, res.Digest, strings.Join(res.Tags, ", "), len(res.Layers), float64(res.Compressed)/(1<<20), float64(res.Unpacked)/(1<<20))
	fmt.Printf("gitops.runner_image: %s@%s\n", o.Repository, res.Digest)
}
