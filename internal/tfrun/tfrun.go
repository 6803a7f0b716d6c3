// Package tfrun implements the pipeline's Terraform port with
// terraform-exec: each cluster gets a workspace holding a copy of its root
// and the shared modules, initialised with an S3 backend and applied (or
// destroyed) with the rendered variables file.
//
// Entry point: Runner.Run.
package tfrun

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-exec/tfexec"
	tfjson "github.com/hashicorp/terraform-json"

	"github.com/regionctl/regionctl/internal/pipeline"
)

// Runner runs Terraform roots for the pipelines.
type Runner struct {
	Source   string // the directory holding the roots and modules/ (the repository's terraform/)
	WorkDir  string // where workspaces are made, one per cluster and root
	ExecPath string // the terraform binary; default: terraform on PATH
	// Template, when set, is a directory holding an initialised
	// .terraform/providers and .terraform.lock.hcl, copied into new
	// workspaces so that init does not unpack the provider again.
	Template string
	// Emulator, when set, is the AWS endpoint URL of an emulator: the
	// workspace gets an override file pointing the provider at it (see
	// emulatorOverride).
	Emulator string
	// Env is added to Terraform's environment (TF_CLI_CONFIG_FILE, ...).
	Env map[string]string
	// WithGaps, with Emulator, keeps in the workspace what the emulator
	// overrides leave out because the emulator lacks its API: a Plan then
	// shows those resources, which only an apply against AWS can create.
	WithGaps bool
}

var _ pipeline.Terraform = (*Runner)(nil)

// Workspace is the directory a job runs in.
func (r *Runner) Workspace(job pipeline.TerraformJob) string {
	return filepath.Join(r.WorkDir, filepath.FromSlash(job.Cluster), job.Root)
}

// Run inits the job's root with its S3 backend and applies or destroys it.
func (r *Runner) Run(ctx context.Context, job pipeline.TerraformJob) (map[string]string, error) {
	tf, err := r.init(ctx, job)
	if err != nil {
		return nil, err
	}
	vars := jobVars(job)
	if job.SavedPlan != nil {
		// A reviewed plan: applied as it is, or refused by Terraform when
		// the state changed since it was made.
		file := filepath.Join(r.Workspace(job), job.Root, "regionctl-reviewed.tfplan")
		if err := os.WriteFile(file, job.SavedPlan, 0o600); err != nil {
			return nil, err
		}
		defer os.Remove(file)
		if err := tf.Apply(ctx, tfexec.DirOrPlan(file)); err != nil {
			if strings.Contains(err.Error(), "Saved plan is stale") {
				return nil, fmt.Errorf("terraform apply: %w: %v", pipeline.ErrStalePlan, err)
			}
			return nil, classify("terraform apply", err)
		}
		return r.outputs(ctx, tf, job)
	}
	if job.Destroy {
		opts := []tfexec.DestroyOption{tfexec.VarFile(job.VarFile)}
		for _, v := range vars {
			opts = append(opts, tfexec.Var(v))
		}
		if err := tf.Destroy(ctx, opts...); err != nil {
			return nil, classify("terraform destroy", err)
		}
		return map[string]string{}, nil
	}
	opts := []tfexec.ApplyOption{tfexec.VarFile(job.VarFile)}
	for _, v := range vars {
		opts = append(opts, tfexec.Var(v))
	}
	if err := tf.Apply(ctx, opts...); err != nil {
		return nil, classify("terraform apply", err)
	}
	return r.outputs(ctx, tf, job)
}

// outputs are the root's outputs after an apply (none after a destroy).
func (r *Runner) outputs(ctx context.Context, tf *tfexec.Terraform, job pipeline.TerraformJob) (map[string]string, error) {
	if job.Destroy {
		return map[string]string{}, nil
	}
	outs, err := tf.Output(ctx)
	if err != nil {
		return nil, classify("terraform output", err)
	}
	values := map[string]string{}
	for k, v := range outs {
		values[k] = strings.Trim(string(v.Value), `"`)
	}
	return values, nil
}

// Plan inits the job's root with its S3 backend, plans an apply (or a
// destroy), and returns the saved plan with what it proposes. It changes
// nothing.
func (r *Runner) Plan(ctx context.Context, job pipeline.TerraformJob) (*pipeline.PlanResult, error) {
	id, err := r.InputID(job)
	if err != nil {
		return nil, err
	}
	plan, file, err := r.ShowPlan(ctx, job)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	sum := pipeline.PlanSummary{ID: id, Resources: []pipeline.ResourceChange{}}
	for _, rc := range plan.ResourceChanges {
		if rc.Change == nil || rc.Mode != tfjson.ManagedResourceMode {
			continue
		}
		a := rc.Change.Actions
		action := ""
		switch {
		case a.Replace():
			action = "replace"
		case a.Create():
			action = "create"
		case a.Update():
			action = "update"
		case a.Delete():
			action = "delete"
		default:
			continue // no-op, read
		}
		sum.Resources = append(sum.Resources, pipeline.ResourceChange{Address: rc.Address, Action: action})
	}
	return &pipeline.PlanResult{File: b, Summary: sum}, nil
}

// ShowPlan inits the job's root with its S3 backend, plans an apply (or a
// destroy) into the workspace's regionctl.tfplan, and returns that plan as
// Terraform shows it, and its file. It changes nothing.
func (r *Runner) ShowPlan(ctx context.Context, job pipeline.TerraformJob) (*tfjson.Plan, string, error) {
	tf, err := r.init(ctx, job)
	if err != nil {
		return nil, "", err
	}
	out := filepath.Join(r.Workspace(job), job.Root, "regionctl.tfplan")
	opts := []tfexec.PlanOption{tfexec.VarFile(job.VarFile), tfexec.Out(out), tfexec.Destroy(job.Destroy)}
	for _, v := range jobVars(job) {
		opts = append(opts, tfexec.Var(v))
	}
	if _, err := tf.Plan(ctx, opts...); err != nil {
		return nil, "", classify("terraform plan", err)
	}
	plan, err := tf.ShowPlanFile(ctx, out)
	if err != nil {
		return nil, "", classify("terraform show", err)
	}
	return plan, out, nil
}

// InputID hashes what a plan of job is made from but the state: every
// file of the staged root and modules (emulator overrides and the
// provider lock included), the variables file, the run-time variables
// but the session name (each run names its own session), the backend and
// the command.
func (r *Runner) InputID(job pipeline.TerraformJob) (string, error) {
	ws := r.Workspace(job)
	if err := r.stage(job, ws); err != nil {
		return "", fmt.Errorf("preparing the workspace %s: %w", ws, err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "regionctl plan input 1\nroot %s\ndestroy %v\n", job.Root, job.Destroy)
	for _, dir := range []string{job.Root, "modules"} {
		err := filepath.WalkDir(filepath.Join(ws, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if os.IsNotExist(err) && p == filepath.Join(ws, dir) {
					return filepath.SkipDir
				}
				return err
			}
			if d.IsDir() {
				if d.Name() == ".terraform" {
					return filepath.SkipDir
				}
				return nil
			}
			if strings.HasSuffix(p, ".tfplan") || strings.HasPrefix(d.Name(), "terraform.tfstate") {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(ws, p)
			fmt.Fprintf(h, "file %s %d\n", filepath.ToSlash(rel), len(b))
			h.Write(b)
			return nil
		})
		if err != nil {
			return "", err
		}
	}
	vf, err := os.ReadFile(job.VarFile)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "varfile %d\n", len(vf))
	h.Write(vf)
	for _, k := range slices.Sorted(maps.Keys(job.Vars)) {
		if k == "assume_role_session_name" {
			continue
		}
		fmt.Fprintf(h, "var %s=%q\n", k, job.Vars[k])
	}
	for _, k := range slices.Sorted(maps.Keys(job.Backend)) {
		fmt.Fprintf(h, "backend %s=%q\n", k, job.Backend[k])
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func jobVars(job pipeline.TerraformJob) []string {
	var vars []string
	for _, k := range slices.Sorted(maps.Keys(job.Vars)) {
		vars = append(vars, k+"="+job.Vars[k])
	}
	return vars
}

// init prepares the job's workspace and inits its root with the job's S3
// backend.
func (r *Runner) init(ctx context.Context, job pipeline.TerraformJob) (*tfexec.Terraform, error) {
	tf, err := r.prepare(job)
	if err != nil {
		return nil, err
	}
	var backend []tfexec.InitOption
	for _, k := range slices.Sorted(maps.Keys(job.Backend)) {
		backend = append(backend, tfexec.BackendConfig(k+"="+job.Backend[k]))
	}
	if r.Emulator != "" {
		for _, kv := range []string{"use_path_style=true", "skip_credentials_validation=true", "skip_requesting_account_id=true",
			"skip_metadata_api_check=true", "skip_region_validation=true", "endpoints={s3=\"" + r.Emulator + "\",sts=\"" + r.Emulator + "\",iam=\"" + r.Emulator + "\"}"} {
			backend = append(backend, tfexec.BackendConfig(kv))
		}
	}
	backend = append(backend, tfexec.Reconfigure(true), tfexec.Upgrade(false))
	if err := tf.Init(ctx, backend...); err != nil {
		return nil, classify("terraform init", err)
	}
	return tf, nil
}

// ForceUnlock releases a lock left by a killed run.
func (r *Runner) ForceUnlock(ctx context.Context, job pipeline.TerraformJob, lockID string) error {
	tf, err := r.prepare(job)
	if err != nil {
		return err
	}
	return classify("terraform force-unlock", tf.ForceUnlock(ctx, lockID))
}

func (r *Runner) prepare(job pipeline.TerraformJob) (*tfexec.Terraform, error) {
	ws := r.Workspace(job)
	if err := r.stage(job, ws); err != nil {
		return nil, fmt.Errorf("preparing the workspace %s: %w", ws, err)
	}
	execPath := r.ExecPath
	if execPath == "" {
		var err error
		if execPath, err = exec.LookPath("terraform"); err != nil {
			return nil, fmt.Errorf("terraform is not on PATH: %w", err)
		}
	}
	tf, err := tfexec.NewTerraform(filepath.Join(ws, job.Root), execPath)
	if err != nil {
		return nil, err
	}
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	for k, v := range r.Env {
		env[k] = v
	}
	if job.Region != "" {
		env["AWS_REGION"] = job.Region
	}
	// Terraform wants its plugin cache directory to exist.
	if d := env["TF_PLUGIN_CACHE_DIR"]; d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	if err := tf.SetEnv(tfexec.CleanEnv(env)); err != nil {
		return nil, err
	}
	if job.Log != nil {
		prefix := "[" + job.Cluster + "] "
		tf.SetStdout(&prefixer{w: job.Log, prefix: prefix})
		tf.SetStderr(&prefixer{w: job.Log, prefix: prefix})
	}
	return tf, nil
}

// stage copies the root and the modules into the workspace, keeping its
// .terraform directory so that a re-run does not install again.
func (r *Runner) stage(job pipeline.TerraformJob, ws string) error {
	root := job.Root
	for _, dir := range []string{root, "modules"} {
		src := filepath.Join(r.Source, dir)
		if _, err := os.Stat(src); os.IsNotExist(err) && dir == "modules" {
			continue
		}
		if err := copyTree(src, filepath.Join(ws, dir)); err != nil {
			return err
		}
	}
	rootWS := filepath.Join(ws, root)
	if err := stageDocuments(job.Documents, filepath.Join(rootWS, pipeline.DocumentsDir)); err != nil {
		return err
	}
	if r.Emulator != "" {
		for rel, text := range emulatorOverrides(root, r.Emulator, providerAliases(rootWS)) {
			if !declaresAWS(filepath.Dir(filepath.Join(ws, rel))) {
				continue // a module this root does not copy, or one without the aws provider
			}
			if r.WithGaps && strings.HasPrefix(rel, "modules/") {
				if err := os.Remove(filepath.Join(ws, rel)); err != nil && !os.IsNotExist(err) {
					return err
				}
				continue
			}
			if err := os.WriteFile(filepath.Join(ws, rel), []byte(text), 0o644); err != nil {
				return err
			}
		}
	}
	if r.Template == "" {
		return nil
	}
	if _, err := os.Stat(filepath.Join(rootWS, ".terraform", "providers")); err == nil {
		return nil
	}
	if err := copyTree(filepath.Join(r.Template, ".terraform", "providers"), filepath.Join(rootWS, ".terraform", "providers")); err != nil {
		return fmt.Errorf("copying the initialised providers of %s: %w", r.Template, err)
	}
	lock, err := os.ReadFile(filepath.Join(r.Template, ".terraform.lock.hcl"))
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(rootWS, ".terraform.lock.hcl"), lock, 0o644)
}

// stageDocuments makes dst hold exactly the rendered documents in src
// (none when src is ""): its regular *.json files, never a link or anything
// else a hostile deploy/ might hold there. InputID hashes them with the
// root, so an approval binds them.
func stageDocuments(src, dst string) error {
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	if src == "" {
		return nil
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return fmt.Errorf("the rendered documents: %w", err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		if !e.Type().IsRegular() {
			return fmt.Errorf("the rendered document %s is not a regular file", filepath.Join(src, e.Name()))
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// copyTree mirrors src's files into dst (skipping .terraform), replacing
// files that differ; providers are hard-linked where possible.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() && d.Name() == ".terraform" && p != src && !strings.Contains(src, ".terraform") {
			return filepath.SkipDir
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if d.Type()&fs.ModeSymlink != 0 {
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			_ = os.Remove(target)
			return os.Symlink(link, target)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Size() > 1<<20 {
			_ = os.Remove(target)
			if os.Link(p, target) == nil {
				return nil
			}
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if old, err := os.ReadFile(target); err == nil && string(old) == string(b) {
			return nil
		}
		return os.WriteFile(target, b, info.Mode().Perm())
	})
}

var aliasRE = regexp.MustCompile(`provider\s+"aws"\s*\{[^}]*?alias\s*=\s*"([A-Za-z0-9_-]+)"`)

// providerAliases lists the aliases of the aws provider a root configures.
func providerAliases(dir string) []string {
	var out []string
	files, _ := filepath.Glob(filepath.Join(dir, "*.tf"))
	for _, f := range files {
		if strings.HasSuffix(f, "_override.tf") {
			continue
		}
		b, _ := os.ReadFile(f)
		for _, m := range aliasRE.FindAllStringSubmatch(string(b), -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// declaresAWS says whether a module directory uses the aws provider, so
// that an override of its configuration has something to override.
func declaresAWS(dir string) bool {
	files, _ := filepath.Glob(filepath.Join(dir, "*.tf"))
	for _, f := range files {
		if strings.HasSuffix(f, "_override.tf") {
			continue
		}
		if b, err := os.ReadFile(f); err == nil && (strings.Contains(string(b), `provider "aws"`) || strings.Contains(string(b), `resource "aws_`)) {
			return true
		}
	}
	return false
}

var lockID = regexp.MustCompile(`(?s)Error acquiring the state lock.*?Lock Info:\s*ID:\s+(\S+)`)

// classify turns a state-lock failure into a *pipeline.LockedError.
func classify(what string, err error) error {
	if err == nil {
		return nil
	}
	if m := lockID.FindStringSubmatch(err.Error()); m != nil {
		return &pipeline.LockedError{ID: m[1], Err: fmt.Errorf("%s: %w", what, err)}
	}
	return fmt.Errorf("%s: %w", what, err)
}

// prefixer writes each line with a prefix.
type prefixer struct {
	w       io.Writer
	prefix  string
	partial []byte
}

func (p *prefixer) Write(b []byte) (int, error) {
	p.partial = append(p.partial, b...)
	for {
		i := strings.IndexByte(string(p.partial), '\n')
		if i < 0 {
			break
		}
		if _, err := fmt.Fprintf(p.w, "%s%s\n", p.prefix, p.partial[:i]); err != nil {
			return 0, err
		}
		p.partial = p.partial[i+1:]
	}
	return len(b), nil
}
