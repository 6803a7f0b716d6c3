package cli

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
)

// buildInfo is what a binary says of itself: its version, its renderer
// (deploy/index.json's renderer: builds of one renderer's source share it
// however they are stamped, and take one another's deploy/ on trust) and
// the commit it was built from, when the build recorded one.
type buildInfo struct {
	Version  string `json:"version"`
	Renderer string `json:"renderer"`
	// RendererModified: built from modified sources, this build's renderer
	// may not be the one its ID names, so it trusts no committed deploy/.
	RendererModified bool   `json:"renderer_modified,omitempty"`
	Commit           string `json:"commit,omitempty"`
	Time             string `json:"commit_time,omitempty"`
	Modified         bool   `json:"modified,omitempty"`
	Go               string `json:"go"`
	Platform         string `json:"platform"`
}

// Commit and CommitTime are set with -ldflags -X by builds that have no VCS
// information of their own (a source archive); the build's vcs.* settings
// win when present.
var Commit, CommitTime string

// `go install github.com/regionctl/regionctl/cmd/regionctl@v1.2.3`, or a
// build of a clean checkout of a release tag, stamps the module version and
// no -X flag: that is the version then. Pseudo-versions and +dirty builds
// keep the development version. The version is not what a render depends
// on: that is the renderer (render.Identity).
func init() {
	bi, ok := debug.ReadBuildInfo()
	if !ok || Version != devVersion {
		return
	}
	if v := bi.Main.Version; semver.IsValid(v) && semver.Build(v) == "" && !module.IsPseudoVersion(v) {
		Version = strings.TrimPrefix(v, "v")
	}
}

func readBuildInfo() buildInfo {
	r := renderer()
	out := buildInfo{Version: Version, Renderer: r.ID, RendererModified: r.Modified, Commit: Commit, Time: CommitTime, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return out
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			out.Commit = s.Value
		case "vcs.time":
			out.Time = s.Value
		case "vcs.modified":
			out.Modified = s.Value == "true"
		}
	}
	return out
}

// text is what `regionctl version` and `regionctl --version` print.
func (bi buildInfo) text() string {
	commit := bi.Commit
	if commit == "" {
		commit = "unknown"
	} else if bi.Modified {
		commit += " (modified)"
	}
	if bi.Time != "" {
		commit += " of " + bi.Time
	}
	rend := bi.Renderer
	if bi.RendererModified {
		rend += " (modified sources: trusts no committed deploy/)"
	}
	return fmt.Sprintf("regionctl %s\ncommit %s\nrenderer %s\n%s %s\n", bi.Version, commit, rend, bi.Go, bi.Platform)
}

func (a *app) versionCommand() *cobra.Command {
	var out *output
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print regionctl's version and the commit it was built from",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			bi := readBuildInfo()
			switch out.format {
			case "json":
				b, _ := json.MarshalIndent(bi, "", "  ")
				fmt.Fprintln(a.stdout, string(b))
			case "text":
				fmt.Fprint(a.stdout, bi.text())
			}
			return nil
		},
	}
	out = outputFlag(cmd, "", "text", "json")
	return cmd
}
