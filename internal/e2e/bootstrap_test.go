package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	ecstypes "github.com/aws/aws-sdk-go-v2/service/ecs/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	ststypes "github.com/aws/aws-sdk-go-v2/service/sts/types"

	"github.com/regionctl/regionctl/internal/awsemu"
	"github.com/regionctl/regionctl/internal/awsx"
	"github.com/regionctl/regionctl/internal/pipeline"
	"github.com/regionctl/regionctl/internal/render/iam"
)

// bootstrapChecklist is the seed's Argo CD bootstrap, asked of the
// accounts after the pipelines ran: each cluster's bootstrap task was
// started by the identity that applied its root, in its own ECS cluster
// and private subnets, with the rendered AppProject and root Application
// as its data; the deploy role can start nothing else and pass no other
// role; ECS alone, of the cluster's own account, may run as the bootstrap
// role, which may read its own cluster and nothing more; and the EKS token
// it signs is the bootstrap role's, bound to its cluster.
func (e *env) bootstrapChecklist(regional, mc01 string) {
	t := e.t
	ctx := context.Background()
	cluster := "mc01"
	boot := region + "-" + cluster + "-bootstrap"
	var st struct {
		Outputs map[string]struct{ Value json.RawMessage } `json:"outputs"`
	}
	raw, _ := e.object("regionctl-regional-pipeline-"+region, "management-cluster/"+region+"/"+cluster+".tfstate")
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	var out pipeline.BootstrapOutput
	if err := json.Unmarshal(st.Outputs["bootstrap"].Value, &out); err != nil || len(out.Subnets) == 0 || out.SecurityGroup == "" ||
		!strings.HasSuffix(out.Cluster, ":"+mc01+":cluster/"+boot) || !strings.Contains(out.TaskDefinition, ":"+mc01+":task-definition/"+boot+":") {
		t.Fatalf("mc01's bootstrap output %s: %v", st.Outputs["bootstrap"].Value, err)
	}

	// The deploy role, as the regional pipeline assumes it.
	_, issuer := e.regionalOf(region)
	pipelineCfg, err := awsemu.WebIdentity(ctx, e.gate.URL, region, iam.RoleARN("aws", regional, iam.PipelineRoleName(region)), issuer, e.platform.Namespace, iam.RegionalServiceAccount)
	if err != nil {
		t.Fatal(err)
	}
	as, err := sts.NewFromConfig(pipelineCfg).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(iam.RoleARN("aws", mc01, iam.DeployRoleName)),
		RoleSessionName: aws.String("probe"), ExternalId: aws.String(iam.ExternalID(region)), Tags: []ststypes.Tag{{Key: aws.String(iam.RequestIDTag), Value: aws.String("probe")}}})
	if err != nil {
		t.Fatal(err)
	}
	deploy := ecs.NewFromConfig(awsemu.Config(e.gate.URL, region, aws.Credentials{AccessKeyID: aws.ToString(as.Credentials.AccessKeyId),
		SecretAccessKey: aws.ToString(as.Credentials.SecretAccessKey), SessionToken: aws.ToString(as.Credentials.SessionToken)}))
	// The task the regional pipeline started, as ECS holds it.
	admin := e.in(mc01)
	admin.Region = region
	ecsAdmin := ecs.NewFromConfig(admin)
	list, err := ecsAdmin.ListTasks(ctx, &ecs.ListTasksInput{Cluster: aws.String(out.Cluster)})
	if err != nil || len(list.TaskArns) == 0 {
		t.Fatalf("mc01's bootstrap tasks: %v %v", list, err)
	}
	// Described through the gate, whose mends moto's task answers need.
	tasks, err := deploy.DescribeTasks(ctx, &ecs.DescribeTasksInput{Cluster: aws.String(out.Cluster), Tasks: list.TaskArns})
	if err != nil {
		t.Fatal(err)
	}
	var docs []byte
	for _, f := range []string{"apps/project.yaml", "root.yaml"} {
		b, err := os.ReadFile(filepath.Join(e.root, "deploy", "staging", region, "argocd", cluster, f))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(append(docs, "---\n"...), b...)
	}
	sum := sha256.Sum256(docs)
	task := tasks.Tasks[0]
	env := map[string]string{}
	if task.Overrides != nil && len(task.Overrides.ContainerOverrides) == 1 && aws.ToString(task.Overrides.ContainerOverrides[0].Name) == pipeline.BootstrapContainer {
		for _, kv := range task.Overrides.ContainerOverrides[0].Environment {
			env[aws.ToString(kv.Name)] = aws.ToString(kv.Value)
		}
	}
	if env[pipeline.EnvRootDocuments] != string(docs) || env[pipeline.EnvRootDocumentsSHA256] != hex.EncodeToString(sum[:]) ||
		aws.ToString(task.TaskDefinitionArn) != out.TaskDefinition || task.LaunchType != ecstypes.LaunchTypeFargate ||
		!strings.HasPrefix(aws.ToString(task.StartedBy), "regionctl-real-regional") {
		t.Errorf("mc01's bootstrap task: definition %s, launch %s, started by %s, environment %v", aws.ToString(task.TaskDefinitionArn), task.LaunchType, aws.ToString(task.StartedBy), env)
	}
	inSubnets := false
	for _, a := range task.Attachments {
		for _, d := range a.Details {
			if aws.ToString(d.Name) == "subnetId" {
				for _, s := range out.Subnets {
					inSubnets = inSubnets || s == aws.ToString(d.Value)
				}
			}
		}
	}
	if !inSubnets {
		t.Errorf("mc01's bootstrap task runs outside its private subnets %v: %+v", out.Subnets, task.Attachments)
	}
	// The task's own command names the fleet repository, from the reviewed
	// config: the one source it accepts for the root Application.
	def, err := ecsAdmin.DescribeTaskDefinition(ctx, &ecs.DescribeTaskDefinitionInput{TaskDefinition: aws.String(out.TaskDefinition)})
	if err != nil || len(def.TaskDefinition.ContainerDefinitions) != 1 {
		t.Fatalf("mc01's bootstrap task definition: %v", err)
	}
	want := []string{"argocd", "bootstrap", "--region", region, "--cluster", cluster, "--repo-url", e.repoURL()}
	if got := def.TaskDefinition.ContainerDefinitions[0].Command; !slices.Equal(got, want) {
		t.Errorf("mc01's bootstrap command %q, want %q", got, want)
	}

	// Who started the tasks, as the gate decided it.
	started := map[string]bool{}
	for _, en := range e.gate.Ledger().Entries() {
		if en.Operation == "ecs:RunTask" && en.Decision == "allow" && (en.Action == "ecs:RunTask" || en.Action == "iam:PassRole") {
			started[en.Principal+" "+en.Action+" "+en.Resource[strings.LastIndex(en.Resource, "/")+1:]] = true
		}
	}
	for _, want := range []string{
		iam.RoleARN("aws", mc01, iam.DeployRoleName) + " ecs:RunTask " + boot + ":1",
		iam.RoleARN("aws", mc01, iam.DeployRoleName) + " iam:PassRole " + boot,
		iam.RoleARN("aws", mc01, iam.DeployRoleName) + " iam:PassRole " + boot + "-ecs",
		iam.RoleARN("aws", regional, iam.AccessRole) + " ecs:RunTask " + region + "-regional-bootstrap:1",
	} {
		if !started[want] {
			t.Errorf("the ledger lacks %q; RunTask decisions: %v", want, started)
		}
	}

	// The deploy role can start nothing else, and pass no other role.
	e.gate.Ledger().Expect(func(en awsemu.Entry) bool {
		return strings.HasPrefix(en.Operation, "ecs:") || en.Operation == "sts:AssumeRole" && strings.HasSuffix(en.Resource, ":role/"+boot)
	})
	network := &ecstypes.NetworkConfiguration{AwsvpcConfiguration: &ecstypes.AwsVpcConfiguration{Subnets: out.Subnets, SecurityGroups: []string{out.SecurityGroup}}}
	_, err = deploy.RunTask(ctx, &ecs.RunTaskInput{Cluster: aws.String("default"), TaskDefinition: aws.String(out.TaskDefinition), LaunchType: ecstypes.LaunchTypeFargate, NetworkConfiguration: network})
	if err == nil || !strings.Contains(err.Error(), "AccessDenied") {
		t.Errorf("the deploy role ran the bootstrap task in another ECS cluster: %v", err)
	}
	_, err = deploy.RegisterTaskDefinition(ctx, &ecs.RegisterTaskDefinitionInput{Family: aws.String(boot), TaskRoleArn: aws.String(iam.RoleARN("aws", mc01, region+"-"+cluster+"-hypershift")),
		RequiresCompatibilities: []ecstypes.Compatibility{ecstypes.CompatibilityFargate}, NetworkMode: ecstypes.NetworkModeAwsvpc, Cpu: aws.String("256"), Memory: aws.String("512"),
		ContainerDefinitions: []ecstypes.ContainerDefinition{{Name: aws.String("x"), Image: aws.String("x"), Memory: aws.Int32(512)}}})
	if err == nil || !strings.Contains(err.Error(), "AccessDenied") {
		t.Errorf("the deploy role registered a task running as the HyperShift operator's role: %v", err)
	}

	// ECS, and only of mc01's account, runs as the bootstrap role; which
	// reads its own cluster, and signs an EKS token bound to it.
	role := iam.RoleARN("aws", mc01, boot)
	if _, err := e.gate.ServiceSession(ctx, role, "ecs-tasks.amazonaws.com", map[string][]string{"aws:SourceAccount": {regional}}); err == nil {
		t.Error("ECS of the regional account ran as mc01's bootstrap role")
	}
	creds, err := e.gate.ServiceSession(ctx, role, "ecs-tasks.amazonaws.com", map[string][]string{"aws:SourceAccount": {mc01}})
	if err != nil {
		t.Fatalf("ECS of mc01's account as its bootstrap role: %v", err)
	}
	taskCfg := awsemu.Config(e.gate.URL, region, creds)
	if _, err := eks.NewFromConfig(taskCfg).DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(cluster)}); err != nil {
		t.Errorf("the bootstrap role describing its cluster: %v", err)
	}
	e.gate.Ledger().Expect(func(en awsemu.Entry) bool { return en.Principal == role })
	if _, err := eks.NewFromConfig(taskCfg).ListClusters(ctx, &eks.ListClustersInput{}); err == nil || !strings.Contains(err.Error(), "AccessDenied") {
		t.Errorf("the bootstrap role listed clusters: %v", err)
	}
	token, err := awsx.EKSToken(ctx, taskCfg, cluster)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(token, "k8s-aws-v1."))
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, string(u), nil)
	req.Header.Set("x-k8s-aws-id", cluster)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), ":"+mc01+":assumed-role/"+boot+"/") {
		t.Errorf("EKS reading the bootstrap task's token: %d %s", resp.StatusCode, body)
	}
}
