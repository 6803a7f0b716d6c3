package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsiam "github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/organizations"
	orgtypes "github.com/aws/aws-sdk-go-v2/service/organizations/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	ststypes "github.com/aws/aws-sdk-go-v2/service/sts/types"
	"github.com/aws/smithy-go"

	"github.com/regionctl/regionctl/internal/awsemu"
	"github.com/regionctl/regionctl/internal/render/iam"
)

// other is the second region of the isolation test: B, where eu-west-1 is A.
const other = "us-west-2"

// centralIn runs the central pipeline of region r.
func (e *env) centralIn(r, id string) {
	e.t.Helper()
	e.as("central")
	if code, _, _ := e.regionctl("pipeline", "central", "--region", r, "--request-id", id); code != 0 {
		e.t.Fatalf("central of %s: exit %d", r, code)
	}
}

// TestControls is the FAQ's six isolation controls and its five ❌ items,
// each tried by a compromised regional pipeline of region A (eu-west-1)
// through the IAM gate: against region B (us-west-2), against the central
// pipeline's infrastructure, or around its own limits, and each denied;
// the same kind of request against A's own resources succeeds.
func TestControls(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	// Both regions bootstrapped, their management cluster accounts minted.
	e.bootstrap()
	if code, _, _ := e.regional("a1"); code != 0 {
		t.Fatalf("regional of A: exit %d", code)
	}
	e.centralIn(other, "central-b")
	e.others[other] = e.accounts()["staging-"+other+"-regional"][0]
	e.issuerIn(other)
	e.asIn("regional", other)
	if code, _, _ := e.regionctl("pipeline", "regional", "--region", other, "--request-id", "b1", "--api-endpoint", e.url); code != 0 {
		t.Fatalf("regional of B: exit %d", code)
	}
	accounts := e.accounts()
	regionalA, regionalB := e.regionalAccount, e.others[other]
	mcA, mcB := accounts["staging-eu-west-1-mc01"][0], accounts["staging-us-west-2-mc01"][0]
	mgmt := awsemu.DefaultAccount

	// A stand-in for a role of the regional cluster (its services' IRSA
	// roles): trusted by its own account, the shape most open to a pipeline
	// of the same account.
	regionalAdmin, err := e.platform.InAccount(ctx, regionalA)
	if err != nil {
		t.Fatal(err)
	}
	trust := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::%s:root"},"Action":"sts:AssumeRole"}]}`, regionalA)
	if _, err := awsiam.NewFromConfig(regionalAdmin).CreateRole(ctx, &awsiam.CreateRoleInput{RoleName: aws.String("eu-west-1-regional-platform-api"), AssumeRolePolicyDocument: aws.String(trust)}); err != nil {
		t.Fatal(err)
	}

	// The compromised pipeline: A's role, as its pod holds it.
	_, issuerA := e.regionalOf(region)
	pipelineA, err := awsemu.WebIdentity(ctx, e.gate.URL, region, iam.RoleARN("aws", regionalA, iam.PipelineRoleName(region)), issuerA, e.platform.Namespace, iam.RegionalServiceAccount)
	if err != nil {
		t.Fatal(err)
	}
	inRegion := func(cfg aws.Config, r string) aws.Config { c := cfg.Copy(); c.Region = r; return c }
	assume := func(cfg aws.Config, arn, ext string, tagged bool) (aws.Config, error) {
		in := &sts.AssumeRoleInput{RoleArn: aws.String(arn), RoleSessionName: aws.String("compromised")}
		if ext != "" {
			in.ExternalId = aws.String(ext)
		}
		if tagged {
			in.Tags = []ststypes.Tag{{Key: aws.String(iam.RequestIDTag), Value: aws.String("x")}}
		}
		out, err := sts.NewFromConfig(cfg).AssumeRole(ctx, in)
		if err != nil {
			return aws.Config{}, err
		}
		c := out.Credentials
		return awsemu.Config(e.gate.URL, cfg.Region, aws.Credentials{AccessKeyID: aws.ToString(c.AccessKeyId), SecretAccessKey: aws.ToString(c.SecretAccessKey), SessionToken: aws.ToString(c.SessionToken)}), nil
	}
	deployA, err := assume(pipelineA, iam.RoleARN("aws", mcA, iam.DeployRoleName), iam.ExternalID(region), true)
	if err != nil {
		t.Fatal(err)
	}
	mintingA, err := assume(pipelineA, iam.RoleARN("aws", mgmt, iam.MintingRoleName(region)), iam.ExternalID(region), true)
	if err != nil {
		t.Fatal(err)
	}
	s3c := func(cfg aws.Config) *s3.Client {
		return s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	}
	get := func(cfg aws.Config, bucket, key, owner string) error {
		_, err := s3c(cfg).GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), ExpectedBucketOwner: aws.String(owner)})
		return err
	}
	put := func(cfg aws.Config, bucket, key string) error {
		_, err := s3c(cfg).PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader("{}")})
		return err
	}
	createAccount := func(cfg aws.Config, name, tagRegion string) error {
		_, err := organizations.NewFromConfig(cfg).CreateAccount(ctx, &organizations.CreateAccountInput{AccountName: aws.String(name), Email: aws.String(name + "@example.com"),
			Tags: []orgtypes.Tag{{Key: aws.String(iam.RegionTag), Value: aws.String(tagRegion)}, {Key: aws.String(iam.EnvironmentTag), Value: aws.String("staging")},
				{Key: aws.String(iam.ClusterTag), Value: aws.String("probe")}}})
		return err
	}
	boundary := "arn:aws:iam::" + mcA + ":policy/" + iam.BoundaryName
	createRole := func(name, boundary string) error {
		in := &awsiam.CreateRoleInput{RoleName: aws.String(name), AssumeRolePolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`)}
		if boundary != "" {
			in.PermissionsBoundary = aws.String(boundary)
		}
		_, err := awsiam.NewFromConfig(deployA).CreateRole(ctx, in)
		return err
	}
	mcState, centralState := "regionctl-regional-pipeline-", "regionctl-tfstate-"
	eksList := func(cfg aws.Config, r string) error {
		creds, err := cfg.Credentials.Retrieve(ctx)
		if err != nil {
			return err
		}
		status, body, err := awsemu.Call(ctx, e.gate.URL, creds, "eks", r, "GET", "/clusters")
		if err == nil && status >= 300 {
			err = &smithy.GenericAPIError{Code: "AccessDeniedException", Message: string(body)}
		}
		return err
	}
	e.gate.Ledger().Expect(func(awsemu.Entry) bool { return true }) // from here on, the probes provoke every denial

	probes := []struct {
		control, what string
		allow         bool
		try           func() error
	}{
		{"1 region-scoped permissions", "read its management clusters' state", true, func() error {
			return get(pipelineA, mcState+region, "management-cluster/eu-west-1/mc01.tfstate", regionalA)
		}},
		{"1 region-scoped permissions", "the same, requested in another region", false, func() error {
			return get(inRegion(pipelineA, other), mcState+region, "management-cluster/eu-west-1/mc01.tfstate", regionalA)
		}},
		{"1 region-scoped permissions", "its deploy role's EKS, in its region", true, func() error { return eksList(deployA, region) }},
		{"1 region-scoped permissions", "its deploy role's EKS, in another region", false, func() error { return eksList(deployA, other) }},
		{"2 restricted AssumeRole", "assume its cluster's deploy role", true, func() error {
			_, err := assume(pipelineA, iam.RoleARN("aws", mcA, iam.DeployRoleName), iam.ExternalID(region), true)
			return err
		}},
		{"2 restricted AssumeRole", "assume its cluster account's AccessRole", false, func() error {
			_, err := assume(pipelineA, iam.RoleARN("aws", mcA, iam.AccessRole), "", false)
			return err
		}},
		{"2 restricted AssumeRole", "the same through its minting role", false, func() error {
			_, err := assume(mintingA, iam.RoleARN("aws", mcA, iam.AccessRole), "", false)
			return err
		}},
		{"3 ExternalId", "its deploy role without ExternalId", false, func() error {
			_, err := assume(pipelineA, iam.RoleARN("aws", mcA, iam.DeployRoleName), "", false)
			return err
		}},
		{"3 ExternalId", "its deploy role with B's ExternalId", false, func() error {
			_, err := assume(pipelineA, iam.RoleARN("aws", mcA, iam.DeployRoleName), iam.ExternalID(other), false)
			return err
		}},
		{"3 ExternalId", "its minting role without ExternalId", false, func() error {
			_, err := assume(pipelineA, iam.RoleARN("aws", mgmt, iam.MintingRoleName(region)), "", false)
			return err
		}},
		{"4 limited IAM", "create its cluster's role with the boundary", true, func() error { return createRole("eu-west-1-mc01-probe", boundary) }},
		{"4 limited IAM", "create its cluster's role without the boundary", false, func() error { return createRole("eu-west-1-mc01-free", "") }},
		{"4 limited IAM", "create a role not named for its cluster", false, func() error { return createRole("admin", boundary) }},
		{"4 limited IAM", "attach AdministratorAccess to its cluster's role", false, func() error {
			_, err := awsiam.NewFromConfig(deployA).AttachRolePolicy(ctx, &awsiam.AttachRolePolicyInput{RoleName: aws.String("eu-west-1-mc01-probe"), PolicyArn: aws.String("arn:aws:iam::aws:policy/AdministratorAccess")})
			return err
		}},
		{"4 limited IAM", "widen the deploy role's own policy", false, func() error {
			_, err := awsiam.NewFromConfig(deployA).PutRolePolicy(ctx, &awsiam.PutRolePolicyInput{RoleName: aws.String(iam.DeployRoleName), PolicyName: aws.String("more"),
				PolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`)})
			return err
		}},
		{"4 limited IAM", "create an IAM user", false, func() error {
			_, err := awsiam.NewFromConfig(deployA).CreateUser(ctx, &awsiam.CreateUserInput{UserName: aws.String("eu-west-1-mc01-user")})
			return err
		}},
		{"5 read-only central access", "read its region's regional cluster state (the Maestro server's key)", false, func() error {
			return get(pipelineA, centralState+region+"-regional", "regional-cluster/eu-west-1/regional.tfstate", mgmt)
		}},
		{"5 read-only central access", "write its region's central state", false, func() error {
			return put(pipelineA, centralState+region+"-regional", "regional-cluster/eu-west-1/regional.tfstate")
		}},
		{"5 read-only central access", "delete the bootstrap's state", false, func() error {
			_, err := s3c(pipelineA).DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(centralState + region + "-regional"), Key: aws.String("central-bootstrap/eu-west-1.tfstate")})
			return err
		}},
		{"6 S3 bucket isolation", "a management cluster account reads the region's state bucket", false, func() error {
			return get(deployA, mcState+region, "management-cluster/eu-west-1/mc01.tfstate", regionalA)
		}},
		{"6 S3 bucket isolation", "a management cluster account writes it", false, func() error {
			return put(deployA, mcState+region, "management-cluster/eu-west-1/mc01.tfstate")
		}},
		{"❌ other regions", "assume B's deploy role with B's ExternalId", false, func() error {
			_, err := assume(pipelineA, iam.RoleARN("aws", mcB, iam.DeployRoleName), iam.ExternalID(other), false)
			return err
		}},
		{"❌ other regions", "assume B's deploy role with its own ExternalId", false, func() error {
			_, err := assume(pipelineA, iam.RoleARN("aws", mcB, iam.DeployRoleName), iam.ExternalID(region), false)
			return err
		}},
		{"❌ other regions", "through its minting role, B's cluster account's AccessRole", false, func() error {
			_, err := assume(mintingA, iam.RoleARN("aws", mcB, iam.AccessRole), "", false)
			return err
		}},
		{"❌ accounts outside its region", "create an account of its region", true, func() error { return createAccount(mintingA, "staging-eu-west-1-probe", region) }},
		{"❌ accounts outside its region", "create an account of B", false, func() error { return createAccount(mintingA, "staging-us-west-2-probe", other) }},
		{"❌ accounts outside its region", "create an account with its own credentials", false, func() error { return createAccount(pipelineA, "staging-eu-west-1-own", region) }},
		{"❌ accounts outside its region", "assume B's minting role", false, func() error {
			_, err := assume(pipelineA, iam.RoleARN("aws", mgmt, iam.MintingRoleName(other)), iam.ExternalID(other), false)
			return err
		}},
		{"❌ accounts outside its region", "move B's cluster account into its OU", false, func() error {
			parents, err := organizations.NewFromConfig(e.awsConfig()).ListParents(ctx, &organizations.ListParentsInput{ChildId: aws.String(mcA)})
			if err != nil {
				return err
			}
			src, err := organizations.NewFromConfig(e.awsConfig()).ListParents(ctx, &organizations.ListParentsInput{ChildId: aws.String(mcB)})
			if err != nil {
				return err
			}
			_, err = organizations.NewFromConfig(mintingA).MoveAccount(ctx, &organizations.MoveAccountInput{AccountId: aws.String(mcB),
				SourceParentId: src.Parents[0].Id, DestinationParentId: parents.Parents[0].Id})
			return err
		}},
		{"❌ other regional pipelines' state", "read B's management cluster state", false, func() error {
			return get(pipelineA, mcState+other, "management-cluster/us-west-2/mc01.tfstate", regionalB)
		}},
		{"❌ other regional pipelines' state", "the same, requested in B's region", false, func() error {
			return get(inRegion(pipelineA, other), mcState+other, "management-cluster/us-west-2/mc01.tfstate", regionalB)
		}},
		{"❌ other regional pipelines' state", "read B's central state", false, func() error {
			return get(pipelineA, centralState+other+"-regional", "regional-cluster/us-west-2/regional.tfstate", mgmt)
		}},
		{"❌ other regional pipelines' state", "read B's handoff", false, func() error {
			_, err := ssm.NewFromConfig(pipelineA).GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(iam.ParameterName(other))})
			return err
		}},
		{"❌ central pipeline infrastructure", "rewrite its own handoff", false, func() error {
			_, err := ssm.NewFromConfig(pipelineA).PutParameter(ctx, &ssm.PutParameterInput{Name: aws.String(iam.ParameterName(region)), Value: aws.String("{}"), Overwrite: aws.Bool(true)})
			return err
		}},
		{"❌ central pipeline infrastructure", "widen its own role's policy", false, func() error {
			_, err := awsiam.NewFromConfig(pipelineA).PutRolePolicy(ctx, &awsiam.PutRolePolicyInput{RoleName: aws.String(iam.PipelineRoleName(region)), PolicyName: aws.String("more"),
				PolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`)})
			return err
		}},
		{"❌ central pipeline infrastructure", "open its state bucket's policy", false, func() error {
			_, err := s3c(pipelineA).PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String(mcState + region), Policy: aws.String(`{"Version":"2012-10-17","Statement":[]}`)})
			return err
		}},
		{"❌ central pipeline infrastructure", "assume the central pipeline's role", false, func() error {
			_, err := assume(pipelineA, e.platform.CentralRole, "", false)
			return err
		}},
		{"❌ roles of the regional cluster", "assume its regional account's AccessRole", false, func() error {
			_, err := assume(pipelineA, iam.RoleARN("aws", regionalA, iam.AccessRole), "", false)
			return err
		}},
		{"❌ roles of the regional cluster", "through its minting role", false, func() error {
			_, err := assume(mintingA, iam.RoleARN("aws", regionalA, iam.AccessRole), "", false)
			return err
		}},
		{"❌ roles of the regional cluster", "assume a regional service's role", false, func() error {
			_, err := assume(pipelineA, iam.RoleARN("aws", regionalA, "eu-west-1-regional-platform-api"), "", false)
			return err
		}},
		{"❌ roles of the regional cluster", "assume a deploy role of the regional account", false, func() error {
			_, err := assume(pipelineA, iam.RoleARN("aws", regionalA, iam.DeployRoleName), iam.ExternalID(region), false)
			return err
		}},
	}
	// The escalation paths an independent IAM simulator found open in the
	// chain this one replaced, each tried by A's compromised pipeline.
	orgAdmin := organizations.NewFromConfig(e.awsConfig()) // the emulator itself, not through the gate
	parentOf := func(account string) string {
		out, err := orgAdmin.ListParents(ctx, &organizations.ListParentsInput{ChildId: aws.String(account)})
		if err != nil || len(out.Parents) == 0 {
			t.Fatalf("the parent of %s: %v", account, err)
		}
		return aws.ToString(out.Parents[0].Id)
	}
	ouA, rootID := parentOf(mcA), ""
	if roots, err := orgAdmin.ListRoots(ctx, &organizations.ListRootsInput{}); err == nil && len(roots.Roots) > 0 {
		rootID = aws.ToString(roots.Roots[0].Id)
	}
	// An account of the organisation that no region owns, sitting in the
	// root (made behind the gate, as another team would).
	loose, err := orgAdmin.CreateAccount(ctx, &organizations.CreateAccountInput{AccountName: aws.String("unmanaged"), Email: aws.String("unmanaged@example.com")})
	if err != nil {
		t.Fatal(err)
	}
	looseID := aws.ToString(loose.CreateAccountStatus.AccountId)
	e.gate.Changed()
	tagAs := func(cfg aws.Config, account, r string) error {
		_, err := organizations.NewFromConfig(cfg).TagResource(ctx, &organizations.TagResourceInput{ResourceId: aws.String(account),
			Tags: []orgtypes.Tag{{Key: aws.String(iam.RegionTag), Value: aws.String(r)}, {Key: aws.String(iam.EnvironmentTag), Value: aws.String("staging")}}})
		return err
	}
	probes = append(probes, []struct {
		control, what string
		allow         bool
		try           func() error
	}{
		{"escalation", "retag B's cluster account as its own", false, func() error { return tagAs(mintingA, mcB, region) }},
		{"escalation", "tag an unmanaged account of the root as its own", false, func() error { return tagAs(mintingA, looseID, region) }},
		{"escalation", "move an unmanaged account of the root into its OU", false, func() error {
			_, err := organizations.NewFromConfig(mintingA).MoveAccount(ctx, &organizations.MoveAccountInput{AccountId: aws.String(looseID),
				SourceParentId: aws.String(rootID), DestinationParentId: aws.String(ouA)})
			return err
		}},
		{"escalation", "move its placed cluster account back to the root", false, func() error {
			_, err := organizations.NewFromConfig(mintingA).MoveAccount(ctx, &organizations.MoveAccountInput{AccountId: aws.String(mcA),
				SourceParentId: aws.String(ouA), DestinationParentId: aws.String(rootID)})
			return err
		}},
		{"escalation", "assume its cluster account's administrator role through the minting role", false, func() error {
			_, err := assume(mintingA, iam.RoleARN("aws", mcA, iam.AccessRole), "", false)
			return err
		}},
		{"escalation", "read its region's regional cluster state (the Maestro server's key)", false, func() error {
			return get(pipelineA, centralState+region+"-regional", "regional-cluster/eu-west-1/regional.tfstate", mgmt)
		}},
	}...)
	var table []string
	for _, p := range probes {
		err := p.try()
		var api smithy.APIError
		denied := errors.As(err, &api) && (strings.HasPrefix(api.ErrorCode(), "AccessDenied") || api.ErrorCode() == "UnauthorizedOperation")
		verdict := "allowed"
		switch {
		case denied:
			verdict = "denied (" + api.ErrorCode() + ")"
		case err != nil:
			verdict = "failed: " + err.Error()
		}
		table = append(table, fmt.Sprintf("%-36s %-62s %s", p.control, p.what, verdict))
		switch {
		case p.allow && err != nil:
			t.Errorf("%s: %s: want allowed, got %v", p.control, p.what, err)
		case !p.allow && !denied:
			t.Errorf("%s: %s: want AccessDenied, got %v", p.control, p.what, err)
		}
	}
	t.Logf("compromised regional pipeline of %s, %d probes:\n%s", region, len(probes), strings.Join(table, "\n"))

	// The account A's minting role created above with an e-mail of its
	// choosing has no root user to recover: the organisation manages root
	// access centrally.
	if ids := e.accounts()["staging-eu-west-1-probe"]; len(ids) != 1 {
		t.Errorf("the probe's account: %v", ids)
	} else if _, err := e.gate.RootUser(ctx, ids[0]); err == nil || !strings.Contains(err.Error(), "no root user credentials") {
		t.Errorf("an account a regional pipeline minted has a root user: %v", err)
	}
	// A root user that does exist (an older account, moved into A's OU)
	// is denied everything there by the guardrails.
	if _, err := orgAdmin.MoveAccount(ctx, &organizations.MoveAccountInput{AccountId: aws.String(looseID), SourceParentId: aws.String(rootID), DestinationParentId: aws.String(ouA)}); err != nil {
		t.Fatal(err)
	}
	e.gate.Changed()
	rootCreds, err := e.gate.RootUser(ctx, looseID)
	if err != nil {
		t.Fatal(err)
	}
	if status, body, err := awsemu.Call(ctx, e.gate.URL, rootCreds, "eks", region, "GET", "/clusters"); err != nil || status != 403 || !strings.Contains(string(body), "service control policy") {
		t.Errorf("the root user of an account of A's OU: %d %s %v", status, body, err)
	}
	// A role the deploy role makes that trusts an account outside the
	// organisation: the data perimeter keeps the outsider out.
	outsideTrust := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::999999999999:root"},"Action":"sts:AssumeRole"}]}`
	if _, err := awsiam.NewFromConfig(deployA).CreateRole(ctx, &awsiam.CreateRoleInput{RoleName: aws.String("eu-west-1-mc01-outside"),
		AssumeRolePolicyDocument: aws.String(outsideTrust), PermissionsBoundary: aws.String(boundary)}); err != nil {
		t.Fatalf("the deploy role making a role: %v", err)
	}
	outsider, err := e.gate.RootUser(ctx, "999999999999")
	if err != nil {
		t.Fatal(err)
	}
	_, err = assume(awsemu.Config(e.gate.URL, region, outsider), iam.RoleARN("aws", mcA, "eu-west-1-mc01-outside"), "", false)
	var api smithy.APIError
	if !errors.As(err, &api) || api.ErrorCode() != "AccessDenied" || !strings.Contains(api.ErrorMessage(), "resource control policy") {
		t.Errorf("an account outside the organisation assuming a role of A's cluster account: %v", err)
	}
	// The Maestro server's thing takes no certificate of the pipeline's
	// (the server's IoT policy admits only a certificate attached to it).
	creds, err := pipelineA.Credentials.Retrieve(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if status, _, err := awsemu.Call(ctx, e.gate.URL, creds, "iot", region, "PUT", "/things/eu-west-1-maestro-server/principals"); err != nil || status != 403 {
		t.Errorf("A's pipeline attaching a certificate to the Maestro server's thing: %d %v", status, err)
	}
}
