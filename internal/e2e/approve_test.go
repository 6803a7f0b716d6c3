package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/regionctl/regionctl/internal/awsemu"
	"github.com/regionctl/regionctl/internal/pipeline"
	"github.com/regionctl/regionctl/internal/render/iam"
)

// reviewAndApprove is a destroy's way through review, with mc02 marked
// delete: true: the regional pipeline plans both clusters as a pull
// request shows them (nothing changes); the run that follows applies
// mc01's reviewed plan and refuses mc02's destroy, which waits for an
// approval; the pipeline cannot approve it itself; an approver does. It
// returns mc02's plan id.
func (e *env) reviewAndApprove(regional string) string {
	t := e.t
	ctx := context.Background()
	code, out, _ := e.regionalRun("pipeline", "regional", "--region", region, "--request-id", "real-plan", "--api-endpoint", e.url, "--parallel", "2", "--plan", "-o", "json")
	if code != 0 {
		t.Fatalf("plan: exit %d; log:\n%s", code, e.log("regional-eu-west-1-real-plan.log"))
	}
	var got struct{ Plans []pipeline.PlanSummary }
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Plans) != 2 {
		t.Fatalf("plans %v: %s", err, out)
	}
	mc01, mc02 := got.Plans[0], got.Plans[1]
	if mc01.Cluster != region+"/mc01" || mc01.Add+mc01.Change+mc01.Destroy != 0 {
		t.Errorf("mc01's plan, with nothing changed: %+v", mc01)
	}
	if mc02.Cluster != region+"/mc02" || mc02.Command != "destroy" || mc02.Add != 0 || mc02.Destroy < 50 ||
		!strings.Contains(strings.Join(mc02.Destroyed(), " "), "module.cluster.module.eks.aws_eks_cluster.this") {
		t.Errorf("mc02's plan, destroyed: %d to add, %d to destroy, %v", mc02.Add, mc02.Destroy, mc02.Destroyed())
	}
	t.Logf("mc02's plan %s: %d to destroy", mc02.ID[:12], mc02.Destroy)
	// The same as a pull request comment.
	code, md, _ := e.regionalRun("pipeline", "regional", "--region", region, "--request-id", "real-plan-md", "--api-endpoint", e.url, "--parallel", "2", "--plan", "-o", "markdown")
	if code != 0 {
		t.Fatalf("plan -o markdown: exit %d", code)
	}
	for _, want := range []string{"| `eu-west-1/mc01` | `management-cluster` | 0 | 0 | 0 |", "| `eu-west-1/mc02` | `management-cluster` | 0 | 0 | ",
		"- `eu-west-1/mc02` `management-cluster`: **delete** `module.cluster.module.eks.aws_eks_cluster.this`"} {
		if !strings.Contains(md, want) {
			t.Errorf("the plans' markdown lacks %q:\n%s", want, md)
		}
	}

	// Unapproved, the destroy waits; mc01 applies its reviewed plan.
	code, out, errOut := e.regionalRun("pipeline", "regional", "--region", region, "--request-id", "real-regional-3", "--api-endpoint", e.url, "--parallel", "2")
	if code == 0 || !strings.Contains(errOut, "the reviewed plan "+mc02.ID[:12]+" is not approved") || !strings.Contains(errOut, "regionctl pipeline approve --region eu-west-1 --cluster mc02 --plan-id "+mc02.ID) {
		t.Fatalf("an unapproved destroy: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "apply of terraform/management-cluster done (the reviewed plan "+mc01.ID[:12]+")") {
		t.Errorf("mc01 did not apply its reviewed plan:\n%s", out)
	}

	// The pipeline may not approve its own destroy.
	key := pipeline.StateKey("management-cluster", region, "mc02") + iam.ApprovalInfix + mc02.ID
	_, issuer := e.regionalOf(region)
	pipelineCfg, err := awsemu.WebIdentity(ctx, e.gate.URL, region, iam.RoleARN("aws", regional, iam.PipelineRoleName(region)), issuer, e.platform.Namespace, iam.RegionalServiceAccount)
	if err != nil {
		t.Fatal(err)
	}
	e.gate.Ledger().Expect(func(en awsemu.Entry) bool { return strings.Contains(en.Resource, iam.ApprovalInfix) })
	_, err = s3.NewFromConfig(pipelineCfg, func(o *s3.Options) { o.UsePathStyle = true }).PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(iam.StateBucket(region)), Key: aws.String(key), Body: bytes.NewReader([]byte(`{"plan_id":"` + mc02.ID + `","cluster":"eu-west-1/mc02"}`))})
	if err == nil || !strings.Contains(err.Error(), "AccessDenied") {
		t.Fatalf("the regional pipeline approving its own destroy: %v", err)
	}

	// An approver does.
	approver, err := e.platform.Approver(ctx, region, regional)
	if err != nil {
		t.Fatal(err)
	}
	creds, err := approver.Credentials.Retrieve(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": creds.AccessKeyID, "AWS_SECRET_ACCESS_KEY": creds.SecretAccessKey, "AWS_SESSION_TOKEN": creds.SessionToken,
		"AWS_ROLE_ARN": "", "AWS_WEB_IDENTITY_TOKEN_FILE": ""} {
		e.vars[k] = v
	}
	// The approver's own credentials, for this command only.
	defer func() {
		for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE"} {
			delete(e.vars, k)
		}
	}()
	code, approveOut, approveErr := e.exec("--root", e.root, "--no-cache", "pipeline", "approve", "--region", region, "--cluster", "mc02", "--plan-id", mc02.ID, "--reason", "CHG-1: retire mc02")
	if code != 0 {
		t.Fatalf("approve: exit %d\n%s%s", code, approveOut, approveErr)
	}
	if !strings.Contains(approveOut, "approved plan "+mc02.ID[:12]+" of eu-west-1/mc02") {
		t.Errorf("approve printed:\n%s", approveOut)
	}
	return mc02.ID
}
