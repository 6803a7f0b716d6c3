package awsemu_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	awsiam "github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/regionctl/regionctl/internal/awsemu"
)

// TestPodIdentityGivesAnAssociationsRoleOnly: the gate answers EKS Pod
// Identity's association API (moto has none) after deciding it, with
// iam:PassRole to pods.eks.amazonaws.com on the role an association names;
// a pod's session is the role of its ServiceAccount's association, assumed
// by the service principal with the session tags EKS sets, and a role whose
// trust names one ServiceAccount is refused to an association of another.
func TestPodIdentityGivesAnAssociationsRoleOnly(t *testing.T) {
	g := gate(t)
	ctx := context.Background()
	acct := awsemu.DefaultAccount
	const region, cluster = "eu-west-1", "pods-mc01"
	root := cfgFor(t, g.URL, region, aws.Credentials{AccessKeyID: awsemu.AccessKeyID, SecretAccessKey: awsemu.SecretAccessKey})
	rootIAM := awsiam.NewFromConfig(root)
	clusterARN := "arn:aws:eks:" + region + ":" + acct + ":cluster/" + cluster
	// The trust modules/pod-identity-trust writes: this cluster, this
	// ServiceAccount, through its session tags.
	trust := func(ns, sa string) *string {
		return doc(map[string]any{"Effect": "Allow", "Principal": map[string]any{"Service": "pods.eks.amazonaws.com"}, "Action": []string{"sts:AssumeRole", "sts:TagSession"},
			"Condition": map[string]any{"StringEquals": map[string]any{"aws:RequestTag/eks-cluster-arn": clusterARN,
				"aws:RequestTag/kubernetes-namespace": ns, "aws:RequestTag/kubernetes-service-account": sa}}})
	}
	must(t)(rootIAM.CreateRole(ctx, &awsiam.CreateRoleInput{RoleName: aws.String("pods-app"), AssumeRolePolicyDocument: trust("app", "app")}))
	must(t)(rootIAM.CreateRole(ctx, &awsiam.CreateRoleInput{RoleName: aws.String("pods-other"), AssumeRolePolicyDocument: trust("other", "other")}))
	must(t)(rootIAM.CreateRole(ctx, &awsiam.CreateRoleInput{RoleName: aws.String("pods-cluster"),
		AssumeRolePolicyDocument: doc(map[string]any{"Effect": "Allow", "Principal": map[string]any{"Service": "eks.amazonaws.com"}, "Action": "sts:AssumeRole"})}))
	subnet, sg := defaultNetwork(t)
	must(t)(eks.NewFromConfig(root).CreateCluster(ctx, &eks.CreateClusterInput{Name: aws.String(cluster), RoleArn: aws.String("arn:aws:iam::" + acct + ":role/pods-cluster"),
		ResourcesVpcConfig: &ekstypes.VpcConfigRequest{SubnetIds: []string{subnet}, SecurityGroupIds: []string{sg}}}))
	// The deployer may manage the cluster's associations and pass the app's
	// role to EKS Pod Identity, and no other role.
	must(t)(rootIAM.CreateRole(ctx, &awsiam.CreateRoleInput{RoleName: aws.String("pods-deployer"),
		AssumeRolePolicyDocument: doc(map[string]any{"Effect": "Allow", "Principal": map[string]any{"AWS": "arn:aws:iam::" + acct + ":root"}, "Action": "sts:AssumeRole"})}))
	must(t)(rootIAM.PutRolePolicy(ctx, &awsiam.PutRolePolicyInput{RoleName: aws.String("pods-deployer"), PolicyName: aws.String("p"), PolicyDocument: doc(
		map[string]any{"Effect": "Allow", "Action": "eks:*", "Resource": "*"},
		map[string]any{"Effect": "Allow", "Action": "iam:PassRole", "Resource": "arn:aws:iam::" + acct + ":role/pods-app",
			"Condition": map[string]any{"StringEquals": map[string]any{"iam:PassedToService": "pods.eks.amazonaws.com"}}},
	)}))
	deployer, err := g.SignIn(ctx, "arn:aws:iam::"+acct+":role/pods-deployer", "d")
	if err != nil {
		t.Fatal(err)
	}
	dep := eks.NewFromConfig(cfgFor(t, g.URL, region, deployer))
	associate := func(c *eks.Client, clusterName, ns, sa, role string) (*eks.CreatePodIdentityAssociationOutput, error) {
		return c.CreatePodIdentityAssociation(ctx, &eks.CreatePodIdentityAssociationInput{ClusterName: aws.String(clusterName), Namespace: aws.String(ns),
			ServiceAccount: aws.String(sa), RoleArn: aws.String("arn:aws:iam::" + acct + ":role/" + role), Tags: map[string]string{"regionctl.io/cluster": "mc01"}})
	}
	_, err = associate(dep, cluster, "other", "other", "pods-other")
	denied(t, "an association passing a role the deployer may not pass", err, "AccessDeniedException")
	_, err = associate(dep, "no-such-cluster", "app", "app", "pods-app")
	denied(t, "an association in a cluster that does not exist", err, "ResourceNotFoundException")
	made, err := associate(dep, cluster, "app", "app", "pods-app")
	if err != nil {
		t.Fatalf("the deployer associating the app's role: %v", err)
	}
	id := aws.ToString(made.Association.AssociationId)
	if !strings.HasPrefix(aws.ToString(made.Association.AssociationArn), "arn:aws:eks:"+region+":"+acct+":podidentityassociation/"+cluster+"/a-") {
		t.Errorf("the association's ARN: %s", aws.ToString(made.Association.AssociationArn))
	}
	_, err = associate(dep, cluster, "app", "app", "pods-app")
	denied(t, "a second association of the same ServiceAccount", err, "ResourceInUseException")
	got, err := dep.DescribePodIdentityAssociation(ctx, &eks.DescribePodIdentityAssociationInput{ClusterName: aws.String(cluster), AssociationId: aws.String(id)})
	if err != nil || aws.ToString(got.Association.RoleArn) != "arn:aws:iam::"+acct+":role/pods-app" || got.Association.Tags["regionctl.io/cluster"] != "mc01" {
		t.Fatalf("describing the association: %+v, %v", got, err)
	}
	list, err := dep.ListPodIdentityAssociations(ctx, &eks.ListPodIdentityAssociationsInput{ClusterName: aws.String(cluster), Namespace: aws.String("app")})
	if err != nil || len(list.Associations) != 1 || aws.ToString(list.Associations[0].AssociationId) != id {
		t.Fatalf("listing the associations: %+v, %v", list, err)
	}

	// The app's pods hold the app's role, with EKS's session tags.
	creds, err := g.PodIdentitySession(ctx, acct, region, cluster, "app", "app", "app-7d9f")
	if err != nil {
		t.Fatalf("the app's pod: %v", err)
	}
	who, err := sts.NewFromConfig(cfgFor(t, g.URL, region, creds)).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil || !strings.Contains(aws.ToString(who.Arn), ":assumed-role/pods-app/") {
		t.Fatalf("the app's pod is %v (%v)", who, err)
	}
	// A ServiceAccount without an association gets nothing; an association
	// of another ServiceAccount to the app's role (made by an administrator,
	// who may pass it) is refused by the role's trust.
	if _, err := g.PodIdentitySession(ctx, acct, region, cluster, "app", "default", "app-7d9f"); err == nil {
		t.Error("a ServiceAccount without an association holds a role")
	}
	must(t)(associate(eks.NewFromConfig(root), cluster, "app", "intruder", "pods-app"))
	if _, err := g.PodIdentitySession(ctx, acct, region, cluster, "app", "intruder", "intruder-1"); err == nil || !strings.Contains(err.Error(), "AccessDenied") {
		t.Errorf("another ServiceAccount's association lent it the app's role: %v", err)
	}
	must(t)(dep.DeletePodIdentityAssociation(ctx, &eks.DeletePodIdentityAssociationInput{ClusterName: aws.String(cluster), AssociationId: aws.String(id)}))
	if _, err := g.PodIdentitySession(ctx, acct, region, cluster, "app", "app", "app-7d9f"); err == nil {
		t.Error("the app's pod holds its role after its association was deleted")
	}
	_, err = dep.DescribePodIdentityAssociation(ctx, &eks.DescribePodIdentityAssociationInput{ClusterName: aws.String(cluster), AssociationId: aws.String(id)})
	denied(t, "describing a deleted association", err, "ResourceNotFoundException")
}
