package cli

import (
	"io"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/regionctl/regionctl/internal/rollout"
	"github.com/regionctl/regionctl/internal/schema"
)

// Shell completion (`regionctl completion bash|zsh|fish|powershell`) offers
// the fleet's own names: regions and clusters from the file names under
// config/ (no load, so it is instant), rollout keys and the values sectors
// run from the loaded fleet. A completion never prints an error: a broken
// fleet completes nothing.

const noFiles = cobra.ShellCompDirectiveNoFileComp

// completionRoot is the --root the user typed so far, else ".".
func completionRoot(cmd *cobra.Command) string {
	if f := cmd.Flag("root"); f != nil && f.Value.String() != "" {
		return f.Value.String()
	}
	return "."
}

// fleetRegions lists config/regions/<region>.yaml.
func fleetRegions(root string) []string {
	files, _ := filepath.Glob(filepath.Join(root, configDir, "regions", "*.yaml"))
	var out []string
	for _, f := range files {
		out = append(out, strings.TrimSuffix(filepath.Base(f), ".yaml"))
	}
	return out
}

// fleetClusters lists config/clusters/<region>/<cluster>.yaml as
// region/cluster.
func fleetClusters(root string) []string {
	files, _ := filepath.Glob(filepath.Join(root, configDir, "clusters", "*", "*.yaml"))
	var out []string
	for _, f := range files {
		out = append(out, filepath.Base(filepath.Dir(f))+"/"+strings.TrimSuffix(filepath.Base(f), ".yaml"))
	}
	sort.Strings(out)
	return out
}

func completeRegions(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	return fleetRegions(completionRoot(cmd)), noFiles
}

func completeClusterIDs(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	return fleetClusters(completionRoot(cmd)), noFiles
}

// completeClusterOfRegion completes --cluster with the clusters of --region.
func completeClusterOfRegion(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	region := ""
	if f := cmd.Flag("region"); f != nil {
		region = f.Value.String()
	}
	var out []string
	for _, id := range fleetClusters(completionRoot(cmd)) {
		r, c, _ := strings.Cut(id, "/")
		if region == "" || r == region {
			out = append(out, c)
		}
	}
	return out, noFiles
}

func completeEnvironments(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return []string{"integration", "staging", "production"}, noFiles
}

// completeExplain completes the cluster, then nothing (paths are free).
func completeExplain(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, noFiles
	}
	return completeClusterIDs(cmd, args, toComplete)
}

// rolloutCompleter completes a rollout key, then (for promote) the values
// the fleet's sectors run for it.
func (a *app) rolloutCompleter(withValue bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 1 || len(args) == 1 && !withValue {
			return nil, noFiles
		}
		a.root = completionRoot(cmd)
		a.stderr = io.Discard
		f, diags, err := a.loaded()
		if err != nil || diags.HasErrors() {
			return nil, noFiles
		}
		keys, err := schema.RolloutKeys()
		if err != nil {
			return nil, noFiles
		}
		only := ""
		if len(args) == 1 {
			only = args[0]
		}
		st, err := rollout.Status(f, keys, only, nil, time.Now())
		if err != nil {
			return nil, noFiles
		}
		seen := map[string]bool{}
		var out []string
		for _, k := range st {
			if only == "" {
				out = append(out, k.Key)
				continue
			}
			for _, s := range k.Sectors {
				for _, v := range s.Values {
					if !seen[v.Value] {
						seen[v.Value] = true
						out = append(out, v.Value)
					}
				}
			}
		}
		return out, noFiles
	}
}
