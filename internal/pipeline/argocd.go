package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// TaskRun is one ecs:RunTask of a cluster's bootstrap task: Fargate, in
// the cluster's private subnets with no public address.
type TaskRun struct {
	Region, Cluster, TaskDefinition string
	Subnets, SecurityGroups         []string
	// Container is the container whose environment Env adds to; Env's
	// values are data the task parses, never a command line or a script.
	Container string
	Env       map[string]string
	StartedBy string
}

// TaskStatus is what ECS says of a task.
type TaskStatus struct {
	LastStatus string // PROVISIONING … RUNNING … STOPPED
	ExitCode   *int   // the container's, once stopped
	Reason     string // why it stopped
}

// Tasks starts ECS tasks and reads their status.
type Tasks interface {
	RunTask(ctx context.Context, creds Credentials, run TaskRun) (arn string, err error)
	DescribeTask(ctx context.Context, creds Credentials, region, cluster, arn string) (TaskStatus, error)
}

// BootstrapOutput is the bootstrap output of both cluster roots. A root of
// one's own (--terraform-dir) that has no bootstrap task says so, and why,
// in None; a root whose output is missing fails the step.
type BootstrapOutput struct {
	Cluster        string   `json:"cluster"`
	TaskDefinition string   `json:"task_definition"`
	Subnets        []string `json:"subnets"`
	SecurityGroup  string   `json:"security_group"`
	None           string   `json:"none"`
}

// Bootstrap task environment: the rendered AppProject and root
// Application (one YAML stream) and its SHA-256, which `regionctl
// bootstrap` checks before it parses it.
const (
	EnvRootDocuments       = "REGIONCTL_ROOT_DOCUMENTS"
	EnvRootDocumentsSHA256 = "REGIONCTL_ROOT_DOCUMENTS_SHA256"
	BootstrapContainer     = "bootstrap"
	// maxRootDocuments keeps the task's overrides under ECS's 8 KiB: it
	// bounds the documents as the RunTask request carries them, a JSON
	// string.
	maxRootDocuments = 7 << 10
)

// bootstrapTimeout bounds the wait for a bootstrap task.
const bootstrapTimeout = 20 * time.Minute

// argocd starts the cluster's bootstrap task with its rendered root
// Application and waits for it to stop; anything but exit code 0 fails the
// step, with the task's reason.
func (r *Runner) argocd(ctx context.Context, p *Plan, s Step, st *clusterState) (string, error) {
	var out BootstrapOutput
	raw := st.Outputs["bootstrap"]
	if raw == "" {
		return "", errors.New("no bootstrap output: the terraform step did not run before this one")
	}
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		return "", fmt.Errorf("the root's bootstrap output: %w", err)
	}
	if out.None != "" {
		return "skipped: the root has no bootstrap task (" + out.None + ")", nil
	}
	if out.Cluster == "" || out.TaskDefinition == "" || out.SecurityGroup == "" || len(out.Subnets) == 0 {
		return "", fmt.Errorf("the root's bootstrap output lacks its cluster, task definition, subnets or security group: %s", raw)
	}
	root, err := r.rootDocuments(s.RootDocuments)
	if err != nil {
		return "", err
	}
	_, creds, err := r.assumeStepRole(ctx, p, s, st)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(root)
	task, err := r.Cloud.RunTask(ctx, creds, TaskRun{Region: p.Region, Cluster: out.Cluster, TaskDefinition: out.TaskDefinition,
		Subnets: out.Subnets, SecurityGroups: []string{out.SecurityGroup}, Container: BootstrapContainer,
		Env:       map[string]string{EnvRootDocuments: string(root), EnvRootDocumentsSHA256: hex.EncodeToString(sum[:])},
		StartedBy: startedBy(p.RequestID)})
	if err != nil {
		return "", fmt.Errorf("starting the bootstrap task %s: %w", out.TaskDefinition, err)
	}
	id := task[strings.LastIndex(task, "/")+1:]
	ctx, cancel := context.WithTimeout(ctx, bootstrapTimeout)
	defer cancel()
	poll := r.Poll
	if poll <= 0 {
		poll = 10 * time.Second
	}
	for {
		status, err := r.Cloud.DescribeTask(ctx, creds, p.Region, out.Cluster, task)
		if err != nil {
			return "", fmt.Errorf("the bootstrap task %s: %w", id, err)
		}
		if status.LastStatus == "STOPPED" {
			switch {
			case status.ExitCode == nil:
				return "", fmt.Errorf("the bootstrap task %s stopped before its container ran: %s", id, status.Reason)
			case *status.ExitCode != 0:
				return "", fmt.Errorf("the bootstrap task %s failed (exit code %d; its log is in /regionctl/%s/bootstrap): %s",
					id, *status.ExitCode, bootstrapPrefix(p.Region, s.Cluster), status.Reason)
			}
			return "Argo CD and " + strings.Join(s.RootDocuments, ", ") + " applied by the bootstrap task " + id, nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("the bootstrap task %s is still %s after %s: %w", id, status.LastStatus, bootstrapTimeout, ctx.Err())
		case <-time.After(poll):
		}
	}
}

// rootDocuments reads the rendered files into one YAML stream, refusing
// a link or anything but regular files, and more than a task takes.
func (r *Runner) rootDocuments(files []string) ([]byte, error) {
	var out []byte
	for _, rel := range files {
		name := filepath.Join(r.Dir, filepath.FromSlash(rel))
		fi, err := os.Lstat(name)
		if err != nil {
			return nil, fmt.Errorf("the rendered %s: %w (run regionctl render)", rel, err)
		}
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("the rendered %s is not a regular file", rel)
		}
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		out = append(append(out, "---\n"...), b...)
	}
	if enc, _ := json.Marshal(string(out)); len(enc) > maxRootDocuments {
		return nil, fmt.Errorf("the rendered %s are %d bytes as ECS carries them; a bootstrap task takes at most %d", strings.Join(files, " and "), len(enc), maxRootDocuments)
	}
	return out, nil
}

// startedBy is ECS's startedBy of a run's tasks (at most 36 characters).
func startedBy(requestID string) string {
	s := "regionctl-" + requestID
	if len(s) > 36 {
		s = s[:36]
	}
	return s
}

func bootstrapPrefix(region, cluster string) string {
	return region + "-" + cluster[strings.LastIndex(cluster, "/")+1:]
}
