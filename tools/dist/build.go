package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/semver"
)

// buildTags leave kustomize's Go plugin loader out of regionctl (the
// Makefile's KUSTOMIZE_TAGS): regionctl loads no plugins, and with cgo the
// plugin package links every exported symbol.
const buildTags = "kustomize_disable_go_plugin_support"

// cliPkg is the package whose variables the linker stamps.
const cliPkg = "github.com/regionctl/regionctl/internal/cli"

// baseVersion is the version snapshots count from; it follows the
// development version in internal/cli.
const baseVersion = "0.1.0"

// source is what a release is built from.
type source struct {
	commit string    // full hash
	time   time.Time // commit time: the archives' timestamps
	dirty  bool
	tag    string // a v* tag at HEAD, if any
}

// release is one resolved build.
type release struct {
	version string
	src     source
	targets []target
}

type target struct{ goos, goarch string }

func (t target) String() string { return t.goos + "/" + t.goarch }

func (t target) exe() string {
	if t.goos == "windows" {
		return "regionctl.exe"
	}
	return "regionctl"
}

// archive is the file name of the target's archive.
func (r release) archive(t target) string {
	ext := ".tar.gz"
	if t.goos == "windows" {
		ext = ".zip"
	}
	return fmt.Sprintf("regionctl_%s_%s_%s%s", r.version, t.goos, t.goarch, ext)
}

func (r release) sbom(t target) string {
	return fmt.Sprintf("regionctl_%s_%s_%s.cdx.json", r.version, t.goos, t.goarch)
}

func run(cfg config) error {
	targets, err := parseTargets(cfg.targets)
	if err != nil {
		return err
	}
	src, err := readSource()
	if err != nil {
		return err
	}
	version, err := resolveVersion(cfg.version, src)
	if err != nil {
		return err
	}
	r := release{version: version, src: src, targets: targets}

	bins, err := os.MkdirTemp("", "regionctl-dist-bin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(bins)

	// Man pages and shell completions come from the commands themselves:
	// a build for this machine writes them once for every archive.
	extras, err := r.generateExtras(cfg.goCmd, bins)
	if err != nil {
		return err
	}
	// Every build runs before anything is written into the checkout: the
	// go command stamps vcs.modified from git status, and a staging
	// directory there would be an untracked file to it.
	for _, t := range targets {
		start := time.Now()
		if err := r.build(cfg.goCmd, t, filepath.Join(bins, t.goos+"_"+t.goarch, t.exe())); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "dist: %s built in %s\n", t, time.Since(start).Round(time.Second))
	}
	// Write into a sibling directory and swap it in at the end: a failed
	// release leaves the previous dist/ as it was.
	out, err := filepath.Abs(cfg.out)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	stage, err := os.MkdirTemp(filepath.Dir(out), "."+filepath.Base(out)+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	for _, t := range targets {
		bin := filepath.Join(bins, t.goos+"_"+t.goarch, t.exe())
		if err := writeArchive(filepath.Join(stage, r.archive(t)), t, bin, extras, r.src.time); err != nil {
			return fmt.Errorf("archiving %s: %w", t, err)
		}
		if err := writeSBOM(filepath.Join(stage, r.sbom(t)), r, t, bin); err != nil {
			return fmt.Errorf("SBOM of %s: %w", t, err)
		}
	}
	if err := writeChecksums(stage); err != nil {
		return err
	}
	if err := verify(stage, r); err != nil {
		return fmt.Errorf("checking the artifacts: %w", err)
	}
	if cfg.signKey != "" {
		if err := sign(stage, cfg.signKey); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	if err := os.Chmod(stage, 0o755); err != nil {
		return err
	}
	if err := os.Rename(stage, out); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "dist: regionctl %s (%s) for %d platforms in %s\n", r.version, short(src.commit), len(targets), cfg.out)
	sums, err := os.ReadFile(filepath.Join(out, checksumsFile))
	if err != nil {
		return err
	}
	// What the release notes publish, and CI recipes pin beside the
	// version (REGIONCTL_SHA256SUMS_SHA256).
	fmt.Fprintf(os.Stderr, "dist: sha256 of %s: %x\n", checksumsFile, sha256.Sum256(sums))
	return nil
}

// generateExtras writes the changelog (from the tags), and the man pages
// and shell completions with a build of regionctl for this machine, and
// lists them as archive entries.
func (r release) generateExtras(goCmd, dir string) ([]archived, error) {
	host := filepath.Join(dir, "host", "regionctl")
	cmd := exec.Command(goCmd, "build", "-tags="+buildTags, "-o", host, "./cmd/regionctl")
	cmd.Env = append(os.Environ(), "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building regionctl for this machine: %v\n%s", err, out)
	}
	manDir := filepath.Join(dir, "man")
	if out, err := exec.Command(host, "dev", "man", "--date", r.src.time.Format("2006-01-02"), manDir).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("regionctl dev man: %v\n%s", err, out)
	}
	pages, err := filepath.Glob(filepath.Join(manDir, "*.1"))
	if err != nil || len(pages) == 0 {
		return nil, fmt.Errorf("regionctl dev man wrote no pages")
	}
	var out []archived
	for _, p := range pages {
		out = append(out, archived{name: "man/" + filepath.Base(p), src: p, mode: 0o644})
	}
	for shell, name := range completionFiles {
		file := filepath.Join(dir, "completions", name)
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return nil, err
		}
		script, err := exec.Command(host, "completion", shell).Output()
		if err != nil {
			return nil, fmt.Errorf("regionctl completion %s: %w", shell, err)
		}
		if err := os.WriteFile(file, script, 0o644); err != nil {
			return nil, err
		}
		out = append(out, archived{name: "completions/" + name, src: file, mode: 0o644})
	}
	log, err := changelog(r.version)
	if err != nil {
		return nil, fmt.Errorf("the changelog: %w", err)
	}
	file := filepath.Join(dir, "CHANGELOG.md")
	if err := os.WriteFile(file, log, 0o644); err != nil {
		return nil, err
	}
	out = append(out, archived{name: "CHANGELOG.md", src: file, mode: 0o644})
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// completionFiles are the completion scripts an archive carries, by shell.
var completionFiles = map[string]string{
	"bash": "regionctl.bash", "zsh": "_regionctl", "fish": "regionctl.fish", "powershell": "regionctl.ps1",
}

// build compiles regionctl for t, static and reproducible: no cgo, no local
// paths, the commit from the VCS stamp and the version from -X.
func (r release) build(goCmd string, t target, bin string) error {
	ldflags := strings.Join([]string{
		"-s", "-w",
		"-X", cliPkg + ".Version=" + r.version,
		"-X", cliPkg + ".Commit=" + r.src.commit,
		"-X", cliPkg + ".CommitTime=" + r.src.time.UTC().Format(time.RFC3339),
	}, " ")
	cmd := exec.Command(goCmd, "build", "-trimpath", "-buildvcs=true", "-tags="+buildTags, "-ldflags="+ldflags, "-o", bin, "./cmd/regionctl")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+t.goos, "GOARCH="+t.goarch, "GOFLAGS=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building %s: %v\n%s", t, err, stderr.String())
	}
	return nil
}

var targetPattern = regexp.MustCompile(`^(linux|darwin|windows)/(amd64|arm64)$`)

func parseTargets(s string) ([]target, error) {
	seen := map[string]bool{}
	var out []target
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if !targetPattern.MatchString(f) {
			return nil, fmt.Errorf("target %q: want os/arch with os linux, darwin or windows and arch amd64 or arm64", f)
		}
		if seen[f] {
			continue
		}
		seen[f] = true
		goos, goarch, _ := strings.Cut(f, "/")
		out = append(out, target{goos, goarch})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}

// readSource asks git what is being built.
func readSource() (source, error) {
	var src source
	line, err := git("log", "-1", "--format=%H %ct")
	if err != nil {
		return src, fmt.Errorf("a release is built from a git checkout: %w", err)
	}
	hash, ct, _ := strings.Cut(line, " ")
	secs, err := strconv.ParseInt(ct, 10, 64)
	if err != nil {
		return src, fmt.Errorf("commit time %q: %w", ct, err)
	}
	src.commit, src.time = hash, time.Unix(secs, 0).UTC()
	// As the go command decides vcs.modified: untracked files count.
	status, err := git("status", "--porcelain")
	if err != nil {
		return src, err
	}
	src.dirty = status != ""
	tags, err := git("tag", "--points-at", "HEAD", "--list", "v*")
	if err != nil {
		return src, err
	}
	for _, t := range strings.Fields(tags) {
		if semver.Canonical(t) == t && (src.tag == "" || semver.Compare(t, src.tag) > 0) {
			src.tag = t
		}
	}
	return src, nil
}

func git(args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// resolveVersion is the release's version: the flag (a semantic version),
// else the v* tag of a clean checkout, else a snapshot of baseVersion.
func resolveVersion(flagVersion string, src source) (string, error) {
	switch {
	case flagVersion != "":
		v := "v" + strings.TrimPrefix(flagVersion, "v")
		if semver.Canonical(v) != v {
			return "", fmt.Errorf("-version %q is not a semantic version without build metadata (1.2.3, 1.2.3-rc.1)", flagVersion)
		}
		return strings.TrimPrefix(v, "v"), nil
	case src.tag != "" && !src.dirty:
		return strings.TrimPrefix(src.tag, "v"), nil
	}
	v := baseVersion + "-snapshot." + short(src.commit)
	if src.dirty {
		v += ".dirty"
	}
	return v, nil
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
