package tekton

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/regionctl/regionctl/internal/render/encode"
)

// Install is regionctl's Tekton installation in one cluster that runs
// pipelines: the central cluster (the central pipeline of every region) or
// a region's regional cluster (that region's regional pipeline). Each has
// its own EventListener, dispatch and reconcile, so no cluster reaches
// another's API.
type Install struct {
	Scope  string // central or regional
	Region string // of a regional cluster
	// Dir is the installation's directory in deploy/; Pipelines the path
	// from it to the repository's pipelines/.
	Dir, Pipelines string
	Namespace      string
	RepoURL        string // the fleet repository: the only one whose pushes count
	Branch         string // the deploy branch: the only one whose pushes count
	Webhook        string // github or gitlab
	RunnerImage    string // registry/repo@sha256:...
	// RoleARN is the pipeline's role, with the account id 000000000000 that
	// the installer replaces (account.env beside the kustomization).
	RoleARN        string
	ServiceAccount string
}

// Files of an installation, by path in deploy/.
func (in Install) Files() (map[string][]byte, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	files := map[string]any{
		"kustomization.yaml": in.kustomization(),
		"kustomizeconfig.yaml": map[string]any{
			"images": []map[string]string{{"path": "spec/steps/image", "kind": "Task"}},
		},
		"serviceaccount.yaml": map[string]any{
			"apiVersion": "v1", "kind": "ServiceAccount",
			"metadata": map[string]any{"name": in.ServiceAccount, "labels": in.labels(),
				"annotations": map[string]string{"eks.amazonaws.com/role-arn": in.RoleARN}},
			// Its Tasks never call the Kubernetes API.
			"automountServiceAccountToken": false,
		},
		"cronjob.yaml":      in.cronJob(),
		"namespace.yaml":    in.namespace(),
		"storageclass.yaml": storageClass(),
	}
	out := map[string][]byte{}
	for p, doc := range files {
		b, err := marshalYAML(doc)
		if err != nil {
			return nil, err
		}
		out[path.Join(in.Dir, p)] = b
	}
	triggers, err := in.triggers()
	if err != nil {
		return nil, err
	}
	out[path.Join(in.Dir, "triggers.yaml")] = triggers
	admission, err := in.admission()
	if err != nil {
		return nil, err
	}
	out[path.Join(in.Dir, "admission.yaml")] = admission
	return out, nil
}

// kustomization builds the installation: the Pipeline of its scope (and
// the dispatch) with the runner image pinned, and its ServiceAccount's
// role ARN given the account of account.env.
func (in Install) kustomization() map[string]any {
	name, digest, _ := strings.Cut(in.RunnerImage, "@")
	// Each cluster holds only the Pipeline it runs (and the dispatch): the
	// other scope's Pipeline, and the Task only it uses, are left out.
	unused := [][2]string{{"Pipeline", Regional}, {"Task", "regionctl-register-cluster"}}
	if in.Scope == "regional" {
		unused = [][2]string{{"Pipeline", Central}, {"Task", "regionctl-bootstrap-regional-pipeline"}}
	}
	var patches []map[string]string
	for _, u := range unused {
		patches = append(patches, map[string]string{"patch": fmt.Sprintf("$patch: delete\napiVersion: tekton.dev/v1\nkind: %s\nmetadata:\n  name: %s\n", u[0], u[1])})
	}
	return map[string]any{
		"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
		"namespace": in.Namespace,
		"patches":   patches,
		"resources": []string{"namespace.yaml", path.Join(in.Pipelines, "tekton"), path.Join(in.Pipelines, "rbac"), "serviceaccount.yaml",
			"triggers.yaml", "cronjob.yaml", "storageclass.yaml", "admission.yaml"},
		"configurations": []string{"kustomizeconfig.yaml"},
		"images":         []map[string]string{{"name": "regionctl", "newName": name, "digest": digest}},
		"configMapGenerator": []map[string]any{{"name": "regionctl-install", "envs": []string{"account.env"},
			"options": map[string]any{"disableNameSuffixHash": true}}},
		"replacements": []map[string]any{{
			"source": map[string]string{"kind": "ConfigMap", "name": "regionctl-install", "fieldPath": "data.account_id"},
			"targets": []map[string]any{{
				"select":     map[string]string{"kind": "ServiceAccount", "name": in.ServiceAccount},
				"fieldPaths": []string{"metadata.annotations.[eks.amazonaws.com/role-arn]"},
				"options":    map[string]any{"delimiter": ":", "index": 4},
			}},
		}},
	}
}

// namespace enforces the restricted Pod Security Standard: every pod of the
// installation (the reconcile's, and each TaskRun's as Tekton builds it
// with set-security-context) meets it, and so must anything else started
// in it.
func (in Install) namespace() map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": in.Namespace, "labels": map[string]string{
			"app.kubernetes.io/part-of":          "regionctl",
			"pod-security.kubernetes.io/enforce": "restricted",
			"pod-security.kubernetes.io/audit":   "restricted",
			"pod-security.kubernetes.io/warn":    "restricted",
		}},
	}
}

// storageClass is the class every run's workspace names (EKS marks none
// default since 1.30): EBS CSI, gp3, encrypted; a run's volume is made in
// the zone its first pod is scheduled to, and goes with the run.
func storageClass() map[string]any {
	return map[string]any{
		"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
		"metadata":          map[string]any{"name": StorageClass, "labels": map[string]string{"app.kubernetes.io/part-of": "regionctl"}},
		"provisioner":       "ebs.csi.aws.com",
		"parameters":        map[string]string{"type": "gp3", "encrypted": "true"},
		"volumeBindingMode": "WaitForFirstConsumer", "reclaimPolicy": "Delete", "allowVolumeExpansion": true,
	}
}

// admission is a ValidatingAdmissionPolicy that holds the two identities
// allowed to create PipelineRuns to the runs they exist for, which RBAC
// cannot say (it grants "create pipelineruns", whatever the run): the
// EventListener's ServiceAccount creates only the dispatch run, as
// regionctl-dispatch, and the dispatch only runs of this cluster's
// Pipeline, as the pipeline's ServiceAccount (which holds the AWS role).
// Neither may inline a Pipeline, resolve one remotely, or override a
// task's ServiceAccount or pod. Kubernetes evaluates the policy itself
// (admissionregistration.k8s.io/v1, GA since 1.30).
func (in Install) admission() ([]byte, error) {
	pipeline := Central
	if in.Scope == "regional" {
		pipeline = Regional
	}
	user := func(sa string) string { return "system:serviceaccount:" + in.Namespace + ":" + sa }
	const name = "regionctl-pipelineruns"
	labels := map[string]string{"app.kubernetes.io/part-of": "regionctl"}
	policy := map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
		"metadata": map[string]any{"name": name, "labels": labels},
		"spec": map[string]any{
			"failurePolicy": "Fail",
			"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{
				"apiGroups": []string{"tekton.dev"}, "apiVersions": []string{"*"},
				"operations": []string{"CREATE", "UPDATE"}, "resources": []string{"pipelineruns"},
			}}},
			"matchConditions": []any{map[string]any{"name": "created-by-regionctl",
				"expression": fmt.Sprintf("request.userInfo.username in ['%s', '%s']", user("regionctl-triggers"), user("regionctl-dispatch"))}},
			"validations": []any{
				map[string]any{
					"expression": "has(object.spec.pipelineRef) && has(object.spec.pipelineRef.name) && !has(object.spec.pipelineRef.resolver) && " +
						"!has(object.spec.pipelineSpec) && !has(object.spec.taskRunSpecs) && " +
						"has(object.spec.taskRunTemplate) && !has(object.spec.taskRunTemplate.podTemplate)",
					"message": "regionctl's identities run only an installed Pipeline by name: no pipelineSpec, resolver, taskRunSpecs or podTemplate",
				},
				map[string]any{
					"expression": fmt.Sprintf("request.userInfo.username == '%s' ? "+
						"(object.spec.pipelineRef.name == 'regionctl-dispatch' && object.spec.taskRunTemplate.serviceAccountName == 'regionctl-dispatch') : "+
						"(object.spec.pipelineRef.name == '%s' && object.spec.taskRunTemplate.serviceAccountName == '%s')",
						user("regionctl-triggers"), pipeline, in.ServiceAccount),
					"message": fmt.Sprintf("the EventListener starts only regionctl-dispatch as regionctl-dispatch; the dispatch only %s as %s", pipeline, in.ServiceAccount),
				},
			},
		},
	}
	binding := map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
		"metadata": map[string]any{"name": name, "labels": labels},
		"spec":     map[string]any{"policyName": name, "validationActions": []string{"Deny"}},
	}
	return marshalDocuments(policy, binding)
}

// marshalDocuments is a multi-document YAML stream of docs.
func marshalDocuments(docs ...any) ([]byte, error) {
	var out []byte
	for i, d := range docs {
		b, err := marshalYAML(d)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			out = append(out, "---\n"...)
		}
		out = append(out, b...)
	}
	return out, nil
}

// check holds every value that reaches a CEL expression, a Task argument
// or an annotation to its grammar (the schema did already; this is the
// renderer's own guard).
func (in Install) check() error {
	for what, v := range map[string]string{"repo_url": in.RepoURL, "revision": in.Branch, "runner image": in.RunnerImage, "region": in.Region} {
		if strings.ContainsAny(v, "'\"\\\n\r\t $()`{}") {
			return fmt.Errorf("the %s %q cannot reach a trigger or a Task: it holds a quote, space, $ or bracket", what, v)
		}
	}
	if !dnsLabel.MatchString(in.Namespace) || !dnsLabel.MatchString(in.ServiceAccount) {
		return fmt.Errorf("the namespace %q and ServiceAccount %q must be DNS labels: they reach an admission policy's CEL", in.Namespace, in.ServiceAccount)
	}
	if !strings.Contains(in.RunnerImage, "@sha256:") {
		return fmt.Errorf("the runner image %q is not pinned by digest", in.RunnerImage)
	}
	if in.Webhook != "github" && in.Webhook != "gitlab" {
		return fmt.Errorf("webhook %q: github or gitlab", in.Webhook)
	}
	return nil
}

// dnsLabel is an RFC 1123 label, the grammar of a namespace's name.
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

func (in Install) labels() map[string]string {
	l := map[string]string{"app.kubernetes.io/part-of": "regionctl", "regionctl.io/pipeline": in.Scope}
	if in.Region != "" {
		l["regionctl.io/region"] = in.Region
	}
	return l
}

// triggers are the EventListener and what it starts: a push is verified
// by the provider's interceptor (its signature, with the webhook secret),
// then only a push to the deploy branch of the fleet repository passes
// the CEL filter; the dispatch run takes the commits from the body and
// the repository from the config.
func (in Install) triggers() ([]byte, error) {
	interceptor, filter := "github", fmt.Sprintf("body.ref == 'refs/heads/%s' && (body.repository.clone_url == '%s' || body.repository.ssh_url == '%s')", in.Branch, in.RepoURL, in.RepoURL)
	events := []string{"push"}
	if in.Webhook == "gitlab" {
		interceptor, filter = "gitlab", fmt.Sprintf("body.ref == 'refs/heads/%s' && (body.project.git_http_url == '%s' || body.project.git_ssh_url == '%s')", in.Branch, in.RepoURL, in.RepoURL)
		events = []string{"Push Hook"}
	}
	meta := func(name string) map[string]any { return map[string]any{"name": name, "labels": in.labels()} }
	docs := []any{
		map[string]any{"apiVersion": "triggers.tekton.dev/v1beta1", "kind": "TriggerBinding", "metadata": meta("regionctl-push"),
			"spec": map[string]any{"params": []map[string]string{{"name": "before", "value": "$(body.before)"}, {"name": "after", "value": "$(body.after)"}}}},
		map[string]any{"apiVersion": "triggers.tekton.dev/v1beta1", "kind": "TriggerTemplate", "metadata": meta("regionctl-dispatch"),
			"spec": map[string]any{
				"params": []map[string]string{{"name": "before", "description": "Commit before the push."}, {"name": "after", "description": "Commit pushed."}},
				"resourcetemplates": []any{map[string]any{
					"apiVersion": "tekton.dev/v1", "kind": "PipelineRun",
					"metadata": map[string]any{"generateName": "regionctl-dispatch-", "labels": in.labels()},
					"spec": map[string]any{
						"pipelineRef": map[string]string{"name": "regionctl-dispatch"},
						"params": []map[string]string{
							{"name": "before", "value": "$(tt.params.before)"}, {"name": "after", "value": "$(tt.params.after)"},
							{"name": "git-url", "value": in.RepoURL}, {"name": "git-branch", "value": in.Branch},
							{"name": "scope", "value": in.Scope}, {"name": "region", "value": in.Region},
						},
						"taskRunTemplate": map[string]string{"serviceAccountName": "regionctl-dispatch"},
						"timeouts":        map[string]string{"pipeline": "30m"},
						"workspaces":      []any{map[string]any{"name": "source", "volumeClaimTemplate": ClaimTemplate("1Gi")}},
					},
				}},
			}},
		map[string]any{"apiVersion": "triggers.tekton.dev/v1beta1", "kind": "EventListener", "metadata": meta("regionctl-push"),
			"spec": map[string]any{
				"serviceAccountName": "regionctl-triggers",
				"triggers": []any{map[string]any{
					"name": "push-to-deploy-branch",
					"interceptors": []any{
						map[string]any{"ref": map[string]string{"name": interceptor, "kind": "ClusterInterceptor"}, "params": []any{
							map[string]any{"name": "secretRef", "value": map[string]string{"secretName": "regionctl-webhook", "secretKey": "token"}},
							map[string]any{"name": "eventTypes", "value": events},
						}},
						map[string]any{"ref": map[string]string{"name": "cel", "kind": "ClusterInterceptor"}, "params": []any{
							map[string]any{"name": "filter", "value": filter},
						}},
					},
					"bindings": []map[string]string{{"kind": "TriggerBinding", "ref": "regionctl-push"}},
					"template": map[string]string{"ref": "regionctl-dispatch"},
				}},
			}},
	}
	return marshalDocuments(docs...)
}

// cronJob runs the reconcile: every five minutes it starts the newest
// waiting run of a cluster once nothing runs, and retries a cluster whose
// run failed at the deploy branch's head.
func (in Install) cronJob() map[string]any {
	security := map[string]any{"runAsNonRoot": true, "runAsUser": 65532, "allowPrivilegeEscalation": false,
		"capabilities": map[string]any{"drop": []string{"ALL"}}}
	args := []string{"--root", "/work/repo", "pipeline", "dispatch", "--reconcile", "--branch", in.Branch, "--scope", in.Scope, "--namespace", in.Namespace}
	if in.Region != "" {
		args = append(args, "--region", in.Region)
	}
	return map[string]any{
		"apiVersion": "batch/v1", "kind": "CronJob", "metadata": map[string]any{"name": "regionctl-reconcile", "labels": in.labels()},
		"spec": map[string]any{
			"schedule": "*/5 * * * *", "concurrencyPolicy": "Forbid", "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 3,
			"jobTemplate": map[string]any{"spec": map[string]any{
				"backoffLimit": 0, "activeDeadlineSeconds": 600,
				"template": map[string]any{"spec": map[string]any{
					"serviceAccountName": "regionctl-dispatch", "restartPolicy": "Never",
					// The restricted Pod Security Standard asks for the
					// runtime's default seccomp profile (a real
					// kube-apiserver refuses the Pod without it).
					"securityContext": map[string]any{"runAsNonRoot": true, "seccompProfile": map[string]any{"type": "RuntimeDefault"}},
					"volumes": []any{map[string]any{"name": "work", "emptyDir": map[string]any{}},
						map[string]any{"name": "git-credentials", "secret": map[string]any{"secretName": "regionctl-git", "optional": true}}},
					"initContainers": []any{map[string]any{
						"name": "fetch", "image": "regionctl", "securityContext": security,
						"args": []string{"pipeline", "fetch", "--url", in.RepoURL, "--branch", in.Branch, "--credentials-dir", "/etc/regionctl/git", "/work/repo"},
						"env":  []map[string]string{{"name": "HOME", "value": "/tmp"}},
						"volumeMounts": []map[string]any{{"name": "work", "mountPath": "/work"},
							{"name": "git-credentials", "mountPath": "/etc/regionctl/git", "readOnly": true}},
					}},
					"containers": []any{map[string]any{
						"name": "reconcile", "image": "regionctl", "securityContext": security, "args": args,
						"env":          []map[string]string{{"name": "HOME", "value": "/tmp"}, {"name": "NO_COLOR", "value": "1"}},
						"volumeMounts": []map[string]string{{"name": "work", "mountPath": "/work"}},
					}},
				}},
			}},
		},
	}
}

func marshalYAML(v any) ([]byte, error) { return encode.YAML(v) }
