// Package charts holds the conformance tests of the platform's own charts
// (charts/): each is rendered by Helm's own Go SDK with the values the
// rendered Applications give it, and the objects judged by a real
// kube-apiserver. A separate module, so that Helm's dependencies never
// reach the regionctl binary.
package charts
