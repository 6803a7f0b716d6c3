package awsemu_test

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	ecstypes "github.com/aws/aws-sdk-go-v2/service/ecs/types"
	awsiam "github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/regionctl/regionctl/internal/awsemu"
	"github.com/regionctl/regionctl/internal/awsx"
)

// TestGateDecidesECSAndTaskRoles: ECS checks iam:PassRole on a task
// definition's roles when it is registered and again when a task of it
// runs, RunTask is held to its ecs:cluster, a task role is assumed by ECS
// only where its trust admits the service, and the task's EKS token (a
// presigned sts:GetCallerIdentity) is verified like any signature.
func TestGateDecidesECSAndTaskRoles(t *testing.T) {
	g := gate(t)
	ctx := context.Background()
	acct := awsemu.DefaultAccount
	root := cfgFor(t, g.URL, "eu-west-1", aws.Credentials{AccessKeyID: awsemu.AccessKeyID, SecretAccessKey: awsemu.SecretAccessKey})
	rootIAM := awsiam.NewFromConfig(root)
	taskTrust := doc(map[string]any{"Effect": "Allow", "Principal": map[string]any{"Service": "ecs-tasks.amazonaws.com"}, "Action": "sts:AssumeRole",
		"Condition": map[string]any{"StringEquals": map[string]any{"aws:SourceAccount": acct}}})
	for _, r := range []string{"boot", "other"} {
		must(t)(rootIAM.CreateRole(ctx, &awsiam.CreateRoleInput{RoleName: aws.String(r), AssumeRolePolicyDocument: taskTrust}))
	}
	must(t)(rootIAM.PutRolePolicy(ctx, &awsiam.PutRolePolicyInput{RoleName: aws.String("boot"), PolicyName: aws.String("p"),
		PolicyDocument: doc(map[string]any{"Effect": "Allow", "Action": "eks:DescribeCluster", "Resource": "arn:aws:eks:eu-west-1:" + acct + ":cluster/mc01"})}))
	ecsARN := func(res string) string { return "arn:aws:ecs:eu-west-1:" + acct + ":" + res }
	// The deployer may run the boot task definition in the boot cluster,
	// passing the boot role to ECS tasks, and nothing more.
	must(t)(rootIAM.CreateRole(ctx, &awsiam.CreateRoleInput{RoleName: aws.String("deployer"),
		AssumeRolePolicyDocument: doc(map[string]any{"Effect": "Allow", "Principal": map[string]any{"AWS": "arn:aws:iam::" + acct + ":root"}, "Action": "sts:AssumeRole"})}))
	must(t)(rootIAM.PutRolePolicy(ctx, &awsiam.PutRolePolicyInput{RoleName: aws.String("deployer"), PolicyName: aws.String("p"), PolicyDocument: doc(
		map[string]any{"Effect": "Allow", "Action": []string{"ecs:RegisterTaskDefinition", "ecs:DescribeTasks"}, "Resource": "*"},
		map[string]any{"Effect": "Allow", "Action": "ecs:RunTask", "Resource": ecsARN("task-definition/boot:*"),
			"Condition": map[string]any{"ArnEquals": map[string]any{"ecs:cluster": "arn:aws:ecs:eu-west-1:*:cluster/boot"}}},
		map[string]any{"Effect": "Allow", "Action": "iam:PassRole", "Resource": "arn:aws:iam::" + acct + ":role/boot",
			"Condition": map[string]any{"StringEquals": map[string]any{"iam:PassedToService": "ecs-tasks.amazonaws.com"}}},
	)}))
	adminECS := ecs.NewFromConfig(root)
	for _, c := range []string{"boot", "default"} {
		must(t)(adminECS.CreateCluster(ctx, &ecs.CreateClusterInput{ClusterName: aws.String(c)}))
	}
	def := func(family, role string) *ecs.RegisterTaskDefinitionInput {
		return &ecs.RegisterTaskDefinitionInput{Family: aws.String(family), TaskRoleArn: aws.String("arn:aws:iam::" + acct + ":role/" + role),
			RequiresCompatibilities: []ecstypes.Compatibility{ecstypes.CompatibilityFargate}, NetworkMode: ecstypes.NetworkModeAwsvpc, Cpu: aws.String("256"), Memory: aws.String("512"),
			ContainerDefinitions: []ecstypes.ContainerDefinition{{Name: aws.String("bootstrap"), Image: aws.String("regionctl"), Essential: aws.Bool(true), Memory: aws.Int32(512)}}}
	}
	// An admin registers a definition of another family with another role.
	must(t)(adminECS.RegisterTaskDefinition(ctx, def("boot", "other")))
	// A person signs in to the deployer role (the root user assumes none).
	deployer, err := g.SignIn(ctx, "arn:aws:iam::"+acct+":role/deployer", "d")
	if err != nil {
		t.Fatal(err)
	}
	dep := cfgFor(t, g.URL, "eu-west-1", deployer)
	depECS := ecs.NewFromConfig(dep)
	_, err = depECS.RegisterTaskDefinition(ctx, def("boot", "other"))
	denied(t, "registering a task definition with a role it may not pass", err, "AccessDeniedException")
	must(t)(depECS.RegisterTaskDefinition(ctx, def("boot", "boot")))
	subnet, sg := defaultNetwork(t)
	run := func(cluster, td string) error {
		_, err := depECS.RunTask(ctx, &ecs.RunTaskInput{Cluster: aws.String(cluster), TaskDefinition: aws.String(td), LaunchType: ecstypes.LaunchTypeFargate,
			NetworkConfiguration: &ecstypes.NetworkConfiguration{AwsvpcConfiguration: &ecstypes.AwsVpcConfiguration{Subnets: []string{subnet}, SecurityGroups: []string{sg}}}})
		return err
	}
	denied(t, "running it in another ECS cluster", run("default", "boot:2"), "AccessDeniedException")
	denied(t, "running the revision whose role it may not pass", run("boot", "boot:1"), "AccessDeniedException")
	if err := run("boot", "boot:2"); err != nil {
		t.Errorf("running its task: %v", err)
	}

	// ECS assumes the task role only as its trust admits.
	if _, err := g.ServiceSession(ctx, "arn:aws:iam::"+acct+":role/boot", "ecs-tasks.amazonaws.com", map[string][]string{"aws:SourceAccount": {"210987654321"}}); err == nil {
		t.Error("ECS of another account assumed the task role")
	}
	if _, err := g.ServiceSession(ctx, "arn:aws:iam::"+acct+":role/boot", "lambda.amazonaws.com", map[string][]string{"aws:SourceAccount": {acct}}); err == nil {
		t.Error("Lambda assumed the task role")
	}
	creds, err := g.ServiceSession(ctx, "arn:aws:iam::"+acct+":role/boot", "ecs-tasks.amazonaws.com", map[string][]string{"aws:SourceAccount": {acct}})
	if err != nil {
		t.Fatal(err)
	}
	task := cfgFor(t, g.URL, "eu-west-1", creds)

	// Its EKS token is verified at the gate as STS verifies it for EKS:
	// the cluster's name is signed, and the identity is the task role's.
	tok, err := awsx.EKSToken(ctx, task, "mc01")
	if err != nil {
		t.Fatal(err)
	}
	call := func(tok, cluster string) (int, string) {
		raw, _ := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(tok, "k8s-aws-v1."))
		req, _ := http.NewRequest(http.MethodGet, string(raw), nil)
		req.Header.Set("x-k8s-aws-id", cluster)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := call(tok, "mc01"); code != 200 || !strings.Contains(body, ":assumed-role/boot/") {
		t.Errorf("the token of mc01: %d %s", code, body)
	}
	if code, body := call(tok, "mc02"); code == 200 || !strings.Contains(body, "SignatureDoesNotMatch") {
		t.Errorf("the token of mc01 shown to mc02: %d %s", code, body)
	}
	forged := []byte(tok)
	forged[len(forged)-1] ^= 1
	if code, _ := call(string(forged), "mc01"); code == 200 {
		t.Error("a forged token passed")
	}
}

// defaultNetwork is a subnet and the security group of the region's
// default VPC, which moto makes.
func defaultNetwork(t *testing.T) (subnet, group string) {
	t.Helper()
	first := func(action, tag string) string {
		code, body, err := awsemu.Call(context.Background(), shared.URL, aws.Credentials{AccessKeyID: awsemu.AccessKeyID, SecretAccessKey: awsemu.SecretAccessKey},
			"ec2", "eu-west-1", http.MethodGet, "/?Action="+action+"&Version=2016-11-15")
		_, after, ok := strings.Cut(string(body), "<"+tag+">")
		id, _, _ := strings.Cut(after, "</"+tag+">")
		if err != nil || code != 200 || !ok || id == "" {
			t.Fatalf("%s: %d %v %s", action, code, err, body)
		}
		return id
	}
	return first("DescribeSubnets", "subnetId"), first("DescribeSecurityGroups", "groupId")
}
