package render

//go:generate go run ../../tools/rendererdigest -root ../..

import (
	"crypto/sha256"
	"fmt"
	"runtime/debug"
	"strings"
)

// Renderer is what a build of regionctl says of its renderer.
type Renderer struct {
	// ID names the renderer: a digest of its source and embedded files
	// (sourceDigest), the Go release it was built with, and the version
	// and checksum of every module its packages import. Two builds with
	// one ID render the same bytes from the same inputs, whether made by
	// make dist, go install or a plain go build, stamped or not. It is
	// written to deploy/index.json ("renderer").
	ID string
	// Modified says the build's VCS stamp records uncommitted changes:
	// its source may not be what sourceDigest describes (tools/rendererdigest
	// has not run, or its test has not), so no deploy/ is taken on trust
	// as what it renders, and its cache is its own.
	Modified bool
}

// Identity is the renderer of a build with information bi (nil: a build
// without any, whose ID rests on its source alone).
func Identity(bi *debug.BuildInfo) Renderer {
	h := sha256.New()
	fmt.Fprintf(h, "regionctl renderer 1\nsource %s\n", sourceDigest)
	var r Renderer
	if bi != nil {
		// The language release (go1.27), not the patch: patch releases
		// fix security and crashes, not what encoding/json writes.
		fmt.Fprintf(h, "go %s\n", goRelease(bi.GoVersion))
		used := make(map[string]bool, len(sourceModules))
		for _, m := range sourceModules {
			used[m] = true
		}
		for _, d := range bi.Deps {
			if !used[d.Path] {
				continue
			}
			m := d
			if d.Replace != nil {
				m = d.Replace
			}
			fmt.Fprintf(h, "module %s %s %s %s\n", d.Path, m.Path, m.Version, m.Sum)
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.modified" && s.Value == "true" {
				r.Modified = true
			}
		}
		if strings.HasSuffix(bi.Main.Version, "+dirty") {
			r.Modified = true
		}
	}
	r.ID = fmt.Sprintf("sha256:%x", h.Sum(nil))
	return r
}

// goRelease is go1.27 of go1.27.3 (and of go1.27rc1).
func goRelease(v string) string {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return v
	}
	minor := parts[1]
	if i := strings.IndexAny(minor, "abcdefghijklmnopqrstuvwxyz-+ "); i >= 0 {
		minor = minor[:i]
	}
	return parts[0] + "." + minor
}
