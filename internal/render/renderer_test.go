package render

import (
	"runtime/debug"
	"testing"
)

// TestIdentityIsTheRenderer: builds of one renderer share an identity
// whatever their version stamp, flags or unrelated modules; a module the
// renderer imports at another version, another Go release or other source
// is another renderer; a build of modified sources says so.
func TestIdentityIsTheRenderer(t *testing.T) {
	if len(sourceModules) == 0 {
		t.Fatal("no source modules: internal/render/source.go is not what tools/rendererdigest writes")
	}
	used := sourceModules[0]
	release := func() *debug.BuildInfo {
		return &debug.BuildInfo{
			GoVersion: "go1.27.3",
			Main:      debug.Module{Path: "github.com/regionctl/regionctl", Version: "v1.2.3"},
			Deps: []*debug.Module{
				{Path: used, Version: "v1.0.0", Sum: "h1:used="},
				{Path: "github.com/spf13/cobra", Version: "v1.10.0", Sum: "h1:cobra="},
			},
			Settings: []debug.BuildSetting{
				{Key: "-trimpath", Value: "true"},
				{Key: "-ldflags", Value: "-s -w -X github.com/regionctl/regionctl/internal/cli.Version=1.2.3"},
				{Key: "vcs.revision", Value: "0123456789abcdef"},
				{Key: "vcs.modified", Value: "false"},
			},
		}
	}
	base := Identity(release())
	if base.Modified || base.ID == "" {
		t.Fatalf("a release build: %+v", base)
	}
	same := map[string]func(*debug.BuildInfo){
		"a plain go build of the same commit": func(bi *debug.BuildInfo) {
			bi.Main.Version = "v1.2.4-0.20261127120000-0123456789ab"
			bi.Settings = bi.Settings[2:]
		},
		"go install at the version": func(bi *debug.BuildInfo) { bi.Main.Sum = "h1:main="; bi.Settings = nil },
		"a later Go patch release":  func(bi *debug.BuildInfo) { bi.GoVersion = "go1.27.9" },
		"another version of a module the renderer does not import": func(bi *debug.BuildInfo) {
			bi.Deps[1].Version, bi.Deps[1].Sum = "v1.11.0", "h1:cobra2="
		},
	}
	for name, change := range same {
		bi := release()
		change(bi)
		if got := Identity(bi); got != base {
			t.Errorf("%s: %+v, want %+v", name, got, base)
		}
	}
	other := map[string]func(*debug.BuildInfo){
		"another Go release":                func(bi *debug.BuildInfo) { bi.GoVersion = "go1.28.0" },
		"another version of a used module":  func(bi *debug.BuildInfo) { bi.Deps[0].Version = "v1.0.1" },
		"another checksum of a used module": func(bi *debug.BuildInfo) { bi.Deps[0].Sum = "h1:other=" },
		"a used module replaced": func(bi *debug.BuildInfo) {
			bi.Deps[0].Replace = &debug.Module{Path: "example.com/fork", Version: "v1.0.0", Sum: "h1:fork="}
		},
	}
	for name, change := range other {
		bi := release()
		change(bi)
		if got := Identity(bi); got.ID == base.ID {
			t.Errorf("%s: the same renderer %s", name, got.ID)
		}
	}
	for name, change := range map[string]func(*debug.BuildInfo){
		"uncommitted changes": func(bi *debug.BuildInfo) { bi.Settings[3].Value = "true" },
		"a +dirty version":    func(bi *debug.BuildInfo) { bi.Main.Version = "v1.2.4-0.20261127120000-0123456789ab+dirty" },
	} {
		bi := release()
		change(bi)
		if got := Identity(bi); !got.Modified || got.ID != base.ID {
			t.Errorf("%s: %+v", name, got)
		}
	}
	if Identity(nil).ID == base.ID {
		t.Error("a build without build information has a release's identity")
	}
}
