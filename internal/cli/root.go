package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/regionctl/regionctl/internal/cache"
	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/diskfs"
	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/gitbase"
	"github.com/regionctl/regionctl/internal/history"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/renderstate"
	"github.com/regionctl/regionctl/internal/schema"
	"github.com/regionctl/regionctl/internal/view"
)

// Exit codes.
const (
	ExitOK       = 0
	ExitInput    = 1 // the user's input is wrong or a check failed
	ExitUsage    = 2
	ExitExternal = 3 // AWS, Terraform or git failed
	// ExitChanges is render --diff's and affected's answer with --exit-code
	// when the change does something; with --exit-code every failure is
	// ExitInput (as terraform plan -detailed-exitcode, git diff --exit-code).
	ExitChanges = 2
)

// exitChanges is how a command says "changes" to Run, which turns it into
// ExitChanges (with --exit-code) or success.
const exitChanges = -2

// Version is regionctl's version; release builds (make dist) set it with
// -ldflags -X. It names the renderer in deploy/index.json.
var Version = devVersion

const devVersion = "0.1.0-dev"

// exitError carries an exit code up to Run.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func fail(code int, format string, args ...any) error {
	return &exitError{code: code, err: fmt.Errorf(format, args...)}
}

// silent is returned when the command already printed why it failed.
var errReported = errors.New("reported")

// app is the state shared by the commands of one invocation.
type app struct {
	stdout, stderr io.Writer
	// began is when this invocation started, before it read anything: a
	// render's record holds no input modified after it (renderstate).
	began time.Time
	// inputs is the stat of a render's inputs taken beside it
	// (snapshotInputsBeside), or nil.
	inputs   func() (renderstate.Snapshot, error)
	root     string
	noColor  bool
	quiet    bool
	noCache  bool
	cacheDir string

	// store is the result cache of this invocation, nil with --no-cache.
	store         *cache.File
	schemaChecker *schema.Checker
	mem           *cache.Memory
	renderMemo    *render.Memo
	fullReview    bool // --full: a review renders every cluster on both sides
	cpuProfile    string
	memProfile    string
	stopProfile   func()
	// restoreGC puts back the GOGC this command found (gcPercent).
	restoreGC func()

	// fleet is loaded once per invocation.
	fleet      *config.Fleet
	fleetDiags diag.Diagnostics
	// branch is the deploy branch (deployBranch), once read.
	branch string
	// past holds the change to the review base and the calendar, its base
	// loaded once when a rule asks (history).
	past *history.Base
	// beside is the render's history rules running beside it, once its
	// fleet is loaded (startHistoryBeside).
	beside *historyBeside
}

// Run executes regionctl with args and returns the process exit code.
func Run(args []string, stdout, stderr io.Writer) int {
	code := run(args, stdout, stderr)
	if !slices.ContainsFunc(args, func(a string) bool { return a == "--exit-code" || a == "--exit-code=true" }) {
		if code == exitChanges {
			return ExitOK
		}
		return code
	}
	switch code {
	case ExitOK:
		return ExitOK
	case exitChanges:
		return ExitChanges
	}
	return ExitInput
}

func run(args []string, stdout, stderr io.Writer) int {
	a := &app{stdout: stdout, stderr: stderr, began: time.Now()}
	cmd := a.rootCommand()
	cmd.SetArgs(args)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	err := cmd.Execute()
	if a.beside != nil {
		<-a.beside.done // a render that failed leaves no rule running
	}
	if a.stopProfile != nil {
		a.stopProfile()
	}
	if a.restoreGC != nil {
		a.restoreGC()
	}
	if a.store != nil {
		// A cache that cannot be written only costs time.
		if a.store.Save() == nil {
			os.Remove(legacyCachePath(a.cachePath()))
		}
	}
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if !errors.Is(ee.err, errReported) {
			fmt.Fprintf(stderr, "regionctl: %v\n", ee.err)
		}
		return ee.code
	}
	// cobra's own errors: unknown command or flag, wrong argument count.
	fmt.Fprintf(stderr, "regionctl: %v\nRun 'regionctl --help' for usage.\n", err)
	return ExitUsage
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "regionctl",
		Short: "Compile the regional platform's fleet config and run its pipelines",
		Long: `regionctl validates the layered fleet config (config/: global, sectors,
regions, clusters) against its embedded CUE schemas, compiles it into the
committed deploy/ tree (Terraform variables, region-scoped IAM, Argo CD
ApplicationSets, Tekton PipelineRuns), and shows reviewers what a change does
and which pipelines it starts.

Run it anywhere inside the fleet repository (the root is the directory
holding config/, found as git finds its work tree), or point --root at it.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       Version,
	}
	root.SetVersionTemplate(readBuildInfo().text())
	root.PersistentFlags().StringVar(&a.root, "root", ".", "repository root holding config/, charts/, pipelines/tekton/ and deploy/")
	root.PersistentFlags().BoolVar(&a.noColor, "no-color", false, "never colour the output (NO_COLOR is honoured too)")
	root.PersistentFlags().BoolVarP(&a.quiet, "quiet", "q", false, "print errors only: no success lines, summaries, warnings or progress")
	root.PersistentFlags().BoolVar(&a.noCache, "no-cache", false, "do not read or write the validation cache")
	root.PersistentFlags().StringVar(&a.cacheDir, "cache-dir", "", "validation cache directory (default: the user cache directory)")
	root.PersistentFlags().StringVar(&a.cpuProfile, "cpuprofile", "", "write a CPU profile of this run to the file (for bug reports)")
	_ = root.PersistentFlags().MarkHidden("cpuprofile")
	root.PersistentFlags().StringVar(&a.memProfile, "memprofile", "", "write a profile of what this run allocated to the file (for bug reports)")
	_ = root.PersistentFlags().MarkHidden("memprofile")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if !cmd.Flags().Changed("root") {
			// From a subdirectory the fleet is found as git finds its work
			// tree; file names are then printed relative to where the user
			// stands.
			if found, ok := gitbase.FleetRoot(".", configDir); ok {
				a.root = filepath.Clean(found)
			}
		}
		if a.memProfile != "" {
			f, err := os.Create(a.memProfile)
			if err != nil {
				return fail(ExitUsage, "--memprofile: %v", err)
			}
			a.stopProfile = func() { _ = pprof.Lookup("allocs").WriteTo(f, 0); f.Close() }
		}
		if a.cpuProfile == "" {
			return nil
		}
		if a.memProfile != "" {
			return fail(ExitUsage, "--cpuprofile and --memprofile profile one run each")
		}
		f, err := os.Create(a.cpuProfile)
		if err != nil {
			return fail(ExitUsage, "--cpuprofile: %v", err)
		}
		a.stopProfile = func() { pprof.StopCPUProfile(); f.Close() }
		return pprof.StartCPUProfile(f)
	}
	root.AddCommand(a.validateCommand(), a.explainCommand(), a.renderCommand(), a.affectedCommand(), a.devCommand(), a.rolloutCommand(), a.pipelineCommand(), a.versionCommand(), a.argocdCommand(), a.ciCommand(), a.chartsCommand())
	return root
}

// configDir is where the fleet lives inside the root.
const configDir = "config"

// loaded returns the fleet of the repository root, loading it on first use.
func (a *app) loaded() (*config.Fleet, diag.Diagnostics, error) {
	if a.fleet == nil {
		f, diags, err := a.loadFleet()
		if err != nil {
			return nil, nil, err
		}
		a.fleet, a.fleetDiags = f, diags
	}
	return a.fleet, a.fleetDiags, nil
}

// validFleet returns the fleet of the repository root, or, after listing
// its problems, fails when it has errors.
func (a *app) validFleet() (*config.Fleet, error) {
	f, diags, err := a.loaded()
	if err != nil {
		return nil, err
	}
	if err := a.reportDiagnostics(diags); err != nil {
		return nil, err
	}
	return f, nil
}

// checkOutput refuses an --output other than text or json.
func checkOutput(output string) error {
	if output != "text" && output != "json" {
		return fail(ExitUsage, "--output must be text or json, not %q", output)
	}
	return nil
}

// loadFleet loads and validates the fleet of the repository root.
func (a *app) loadFleet() (*config.Fleet, diag.Diagnostics, error) {
	checker, err := a.checker()
	if err != nil {
		return nil, nil, err
	}
	f, diags := fleet.Load(diskfs.New(a.root), configDir, checker)
	return f, a.relative(diags), nil
}

func (a *app) memory() *cache.Memory {
	if a.mem == nil {
		a.mem = cache.NewMemory()
	}
	return a.mem
}

// checker returns the schema checker of this invocation, backed by the
// result cache unless --no-cache. The cache is saved when the command ends.
func (a *app) checker() (*schema.Checker, error) {
	if a.schemaChecker != nil {
		return a.schemaChecker, nil
	}
	// Without the file cache, results are still shared within this run
	// (the two sides of a review have most layers in common).
	var c schema.Cache = a.memory()
	if !a.noCache && a.store == nil {
		if p := a.cachePath(); p != "" {
			a.store = cache.Open(p)
		}
	}
	if a.store != nil {
		c = a.store
	}
	checker, err := schema.New(schema.Options{Cache: c, Version: buildIdentity()})
	if err != nil {
		return nil, fail(ExitExternal, "loading the embedded schema: %w", err)
	}
	a.schemaChecker = checker
	return checker, nil
}

func (a *app) cachePath() string {
	dir := a.cacheDir
	if dir == "" {
		if d := os.Getenv("REGIONCTL_CACHE_DIR"); d != "" {
			dir = d
		} else if d, err := os.UserCacheDir(); err == nil {
			dir = filepath.Join(d, "regionctl")
		} else {
			return ""
		}
	}
	abs, err := filepath.Abs(a.root)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(dir, "results-"+hex.EncodeToString(sum[:8])+".cache")
}

// legacyCachePath is where regionctl kept the cache of a repository in
// its earlier format (a gob map loaded whole); a save removes it.
func legacyCachePath(path string) string {
	dir, name := filepath.Split(path)
	return filepath.Join(dir, "validate-"+strings.TrimSuffix(strings.TrimPrefix(name, "results-"), ".cache")+".gob")
}

// renderer is this build's renderer, from its build information (tests
// replace it).
var renderer = sync.OnceValue(func() render.Renderer {
	bi, _ := debug.ReadBuildInfo()
	return render.Identity(bi)
})

// cacheSalt is what sets this build apart from other builds of its
// renderer in cache keys: nothing, when its renderer is known by its
// source, else the executable's stamp.
func cacheSalt() string {
	if renderer().Modified {
		return binaryStamp()
	}
	return ""
}

// buildIdentity names this build in every cache key and in the render
// state: its renderer and cacheSalt.
func buildIdentity() string { return renderer().ID + "+" + cacheSalt() }

// binaryStamp identifies the running executable, so that a rebuilt
// regionctl never trusts results cached by an older build.
func binaryStamp() string {
	exe, err := os.Executable()
	if err != nil {
		return "unknown"
	}
	st, err := os.Stat(exe)
	if err != nil {
		return "unknown"
	}
	return fmt.Sprintf("%d.%d", st.Size(), st.ModTime().UnixNano())
}

// relative rewrites diagnostic paths to be relative to the working
// directory when --root points elsewhere.
func (a *app) relative(ds diag.Diagnostics) diag.Diagnostics {
	if a.root == "." || a.root == "" {
		return ds
	}
	fix := func(p *diag.Pos) {
		if p.File != "" && !strings.HasPrefix(p.File, "schema/") {
			p.File = filepath.ToSlash(filepath.Join(a.root, p.File))
		}
	}
	for i := range ds {
		fix(&ds[i].Pos)
		for j := range ds[i].Related {
			fix(&ds[i].Related[j].Pos)
		}
	}
	return ds
}

func (a *app) printer(w io.Writer) *view.Printer {
	p := view.New(w, a.noColor)
	p.Quiet = a.quiet
	return p
}

// reportDiagnostics prints diags and turns errors among them into exit 1.
func (a *app) reportDiagnostics(diags diag.Diagnostics) error {
	if len(diags) > 0 {
		a.printer(a.stderr).Diagnostics(diags)
	}
	if diags.HasErrors() {
		return &exitError{code: ExitInput, err: errReported}
	}
	return nil
}

var _ fs.FS = os.DirFS(".")
