// Command kube-apiserver is the Kubernetes API server of the release
// go.mod pins, built from the k8s.io/kubernetes module through the Go
// module proxy: the real control plane regionctl's rendered objects are
// judged by in tests (internal/kube/apiserver). Test-only, never shipped.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
