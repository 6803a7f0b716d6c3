package iam_test

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/regionctl/regionctl/internal/iamjudge"
	"github.com/regionctl/regionctl/internal/render/iam"
)

// serviceLinked are the services whose resources the roots may make that
// create a service-linked role on first use, as the principal making the
// resource, which therefore needs iam:CreateServiceLinkedRole for that
// service name (each service's "Using service-linked roles" page: EKS,
// EKS node groups, Amazon EC2 Auto Scaling (node groups' groups), ECS,
// Elastic Load Balancing, RDS). By resource type prefix of the hashicorp/aws
// provider.
var serviceLinked = []struct{ prefix, service string }{
	{"aws_eks_cluster", "eks.amazonaws.com"},
	{"aws_eks_node_group", "eks-nodegroup.amazonaws.com"},
	{"aws_eks_node_group", "autoscaling.amazonaws.com"},
	{"aws_autoscaling_group", "autoscaling.amazonaws.com"},
	{"aws_ecs_", "ecs.amazonaws.com"},
	{"aws_lb", "elasticloadbalancing.amazonaws.com"},
	{"aws_db_", "rds.amazonaws.com"},
	{"aws_rds_", "rds.amazonaws.com"},
}

// madeByControllers are the services whose resources something other than
// the root makes in a management cluster's account, under the permissions
// boundary: the load balancer controller's load balancers.
var madeByControllers = []string{"elasticloadbalancing.amazonaws.com"}

// moduleResources are the resource types of a root and every module it
// calls, by the module sources of its .tf files (local modules only).
func moduleResources(t *testing.T, dir string, seen map[string]bool) []string {
	t.Helper()
	dir = filepath.Clean(dir)
	if seen[dir] {
		return nil
	}
	seen[dir] = true
	files, _ := filepath.Glob(filepath.Join(dir, "*.tf"))
	if len(files) == 0 {
		t.Fatalf("no Terraform in %s", dir)
	}
	var out []string
	resource := regexp.MustCompile(`(?m)^resource "([a-z0-9_]+)"`)
	source := regexp.MustCompile(`(?m)^\s*source\s*=\s*"(\.\.?/[^"]+)"`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range resource.FindAllStringSubmatch(string(b), -1) {
			out = append(out, m[1])
		}
		for _, m := range source.FindAllStringSubmatch(string(b), -1) {
			out = append(out, moduleResources(t, filepath.Join(dir, m[1]), seen)...)
		}
	}
	return out
}

// TestServiceLinkedRolesOfTheManagementCluster: every service-linked role
// the management-cluster root's resources need is one its caller, the
// deploy role, may create (for that service name only), or, where the
// creator would be a controller under the permissions boundary (which
// denies all of IAM), one the root makes itself. Both IAM judges decide.
func TestServiceLinkedRolesOfTheManagementCluster(t *testing.T) {
	const account = "123456789012"
	region := iam.Region{Name: "eu-west-1"}
	types := moduleResources(t, "../../../terraform/management-cluster", map[string]bool{})
	need := map[string]bool{}
	declared := map[string]bool{}
	for _, typ := range types {
		for _, s := range serviceLinked {
			if strings.HasPrefix(typ, s.prefix) {
				need[s.service] = true
			}
		}
	}
	for _, s := range madeByControllers {
		need[s] = true
	}
	root, err := os.ReadFile("../../../terraform/management-cluster/main.tf")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`aws_service_name\s*=\s*"([a-z0-9.-]+)"`).FindAllStringSubmatch(string(root), -1) {
		declared[m[1]] = true
	}
	if len(need) < 4 {
		t.Fatalf("the management-cluster root needs only %v: the resource scan found %d types", need, len(types))
	}
	deploy := iam.DeployRolePolicy(region)
	boundary := iam.Boundary(region)
	caller := session(account, iam.DeployRoleName, "regional-pipeline")
	create := func(service string, identity []iam.Document, b *iam.Document) iamjudge.Authorization {
		return iamjudge.Authorization{Request: iamjudge.Request{Caller: caller, Action: "iam:CreateServiceLinkedRole",
			Resource: iam.RoleARN("aws", account, "aws-service-role/"+service+"/AWSServiceRoleFor"+service),
			Context:  map[string][]string{"iam:AWSServiceName": {service}, "aws:RequestedRegion": {"us-east-1"}}},
			Identity: identity, Boundary: b}
	}
	var services []string
	for s := range need {
		services = append(services, s)
	}
	sort.Strings(services)
	for _, service := range services {
		byController := false
		for _, c := range madeByControllers {
			byController = byController || c == service
		}
		if byController {
			// The controller, under the boundary, cannot.
			if v := judge(t, "a controller makes "+service+"'s role", create(service, []iam.Document{{Version: "2012-10-17",
				Statement: []iam.Statement{{Effect: "Allow", Action: iam.Strings{"iam:CreateServiceLinkedRole"}, Resource: iam.Strings{"*"}}}}}, &boundary)); v.Decision == iamjudge.Allow {
				t.Errorf("%s: the boundary lets a controller create its service-linked role", service)
			}
			if !declared[service] {
				t.Errorf("%s: a controller under the boundary would make its first resource, and the root does not make its service-linked role (aws_iam_service_linked_role)", service)
			}
		}
		if v := judge(t, "the deploy role makes "+service+"'s role", create(service, []iam.Document{deploy}, nil)); v.Decision != iamjudge.Allow {
			t.Errorf("%s: the deploy role may not create its service-linked role: %s", service, v.Reason)
		}
	}
	// And no other: the grant is per service name.
	if v := judge(t, "the deploy role makes another service's role", create("ssm.amazonaws.com", []iam.Document{deploy}, nil)); v.Decision == iamjudge.Allow {
		t.Error("the deploy role may create any service's service-linked role")
	}
	t.Logf("service-linked roles of the management cluster: %v (made by the root: %v)", services, declared)
}
