package cli

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// buildInfo is what a binary says of itself: the version it renders as
// (deploy/index.json's generator) and the commit it was built from, when
// the build recorded one.
type buildInfo struct {
	Version  string `json:"version"`
	Commit   string `json:"commit,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

func readBuildInfo() buildInfo {
	out := buildInfo{Version: Version, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				out.Commit = s.Value
			case "vcs.modified":
				out.Modified = s.Value == "true"
			}
		}
	}
	return out
}

func (a *app) versionCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print regionctl's version and the commit it was built from",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			bi := readBuildInfo()
			switch output {
			case "json":
				b, _ := json.MarshalIndent(bi, "", "  ")
				fmt.Fprintln(a.stdout, string(b))
			case "text":
				commit := bi.Commit
				if commit == "" {
					commit = "unknown"
				} else if bi.Modified {
					commit += " (modified)"
				}
				fmt.Fprintf(a.stdout, "regionctl %s\ncommit %s\n%s %s\n", bi.Version, commit, bi.Go, bi.Platform)
			default:
				return fail(ExitUsage, "unknown output format %q: text or json", output)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}
