package e2e

import (
	"bytes"
	"context"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/organizations"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/regionctl/regionctl/internal/argohealth"
	"github.com/regionctl/regionctl/internal/awsemu"
	"github.com/regionctl/regionctl/internal/render/iam"
)

// healthChecklist is the rollout's way out of private clusters, asked
// through the IAM gate: the central pipeline made the region's health
// bucket in the management account; each cluster's health reporter
// (argocd/argocd-health-reporter, through its EKS Pod Identity
// association) puts its report under its own account's prefix and can do
// nothing else there; no other role of its account, nor the regional
// pipeline, may write a report; and the gate of rollout promote, reading
// as a principal of the management account (the central pipeline's role),
// judges what the clusters reported.
func (e *env) healthChecklist(regional, mc01, mc02 string, regionalCluster, mc01Cluster string) {
	t := e.t
	ctx := context.Background()
	const bucket = "regionctl-argocd-health-staging-" + region
	if owner := e.bucketOwner(bucket); owner != awsemu.DefaultAccount {
		t.Fatalf("the health bucket belongs to %q, not the management account", owner)
	}
	if _, ok := e.gate.BucketPolicy(bucket); !ok {
		t.Fatalf("the health bucket has no policy")
	}
	pod := func(account, cluster, namespace, sa string) aws.Config {
		creds, err := e.gate.PodIdentitySession(ctx, account, region, cluster, namespace, sa, sa+"-0")
		if err != nil {
			t.Fatalf("%s %s/%s: %v", cluster, namespace, sa, err)
		}
		return awsemu.Config(e.gate.URL, region, creds)
	}
	pathStyle := func(o *s3.Options) { o.UsePathStyle = true }
	report := func(cfg aws.Config, cluster string, health string) (string, error) {
		p := &argohealth.Publisher{S3: s3.NewFromConfig(cfg, pathStyle), STS: sts.NewFromConfig(cfg), Bucket: bucket}
		r := argohealth.Report{Version: argohealth.ReportVersion, Region: region, Cluster: cluster, ReportedAt: time.Now()}
		var err error
		if r.Applications, err = argohealth.DecodeApplications([]byte(`[{"metadata":{"name":"root","labels":{"component":"root","sector":"stage","cluster":"` +
			cluster + `"}},"status":{"health":{"status":"` + health + `"},"sync":{"status":"Synced","revision":"v1"}}}]`)); err != nil {
			t.Fatal(err)
		}
		return p.Publish(ctx, r)
	}
	reporter := pod(mc01, mc01Cluster, "argocd", "argocd-health-reporter")
	if where, err := report(reporter, "mc01", "Healthy"); err != nil || where != "s3://"+bucket+"/"+argohealth.ReportKey(mc01) {
		t.Errorf("mc01's reporter putting its report: %q %v", where, err)
	}
	if _, err := report(pod(regional, regionalCluster, "argocd", "argocd-health-reporter"), "regional", "Healthy"); err != nil {
		t.Errorf("the regional cluster's reporter putting its report: %v", err)
	}
	// The probes below provoke their denials.
	e.gate.Ledger().Expect(func(en awsemu.Entry) bool { return strings.Contains(en.Resource, ":::"+bucket) })
	put := func(cfg aws.Config, key string) error {
		_, err := s3.NewFromConfig(cfg, pathStyle).PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader([]byte(`{}`))})
		return err
	}
	_, issuerA := e.regionalOf(region)
	pipelineCfg, err := awsemu.WebIdentity(ctx, e.gate.URL, region, iam.RoleARN("aws", e.regionalAccount, iam.PipelineRoleName(region)), issuerA, e.platform.Namespace, iam.RegionalServiceAccount)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		what string
		err  error
	}{
		{"mc01's reporter writes mc02's report", put(reporter, argohealth.ReportKey(mc02))},
		{"mc01's reporter writes outside its report", put(reporter, mc01+"/other.json")},
		{"mc01's reporter reads its report", func() error {
			_, err := s3.NewFromConfig(reporter, pathStyle).GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(argohealth.ReportKey(mc01))})
			return err
		}()},
		{"mc01's External Secrets controller writes mc01's report", put(pod(mc01, mc01Cluster, "external-secrets", "external-secrets"), argohealth.ReportKey(mc01))},
		{"the regional pipeline writes the regional account's report", put(pipelineCfg, argohealth.ReportKey(e.regionalAccount))},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), "AccessDenied") {
			t.Errorf("%s: %v, want AccessDenied", tc.what, tc.err)
		}
	}
	// rollout promote's gate, reading as the central pipeline.
	central, err := awsemu.WebIdentity(ctx, e.gate.URL, region, e.platform.CentralRole, e.platform.CentralIssuer, e.platform.Namespace, iam.CentralServiceAccount)
	if err != nil {
		t.Fatal(err)
	}
	targets := []argohealth.ReportTarget{{Region: region, Cluster: "mc01", Bucket: bucket}, {Region: region, Cluster: "regional", Bucket: bucket}}
	gate := &argohealth.ReportGate{S3: s3.NewFromConfig(central, pathStyle), Accounts: organizations.NewFromConfig(central), MaxAge: 10 * time.Minute, Now: time.Now,
		Targets: func(string) ([]argohealth.ReportTarget, error) { return targets, nil }}
	if msg, err := gate.Check("stage", "", ""); err != nil || !strings.Contains(msg, "2 Applications on 2 clusters") {
		t.Errorf("the gate, reading the reports as the central pipeline: %q %v", msg, err)
	}
	if _, err := report(reporter, "mc01", "Degraded"); err != nil {
		t.Fatal(err)
	}
	if _, err := gate.Check("stage", "", ""); err == nil || !strings.Contains(err.Error(), "eu-west-1/mc01: root is Degraded and Synced") {
		t.Errorf("the gate after mc01 reported a degraded root: %v", err)
	}
	// mc01 vouching for mc02, which has not reported: its account is
	// tagged mc01's, so the gate refuses the report.
	if _, err := report(reporter, "mc02", "Healthy"); err != nil {
		t.Fatal(err)
	}
	targets = append(targets, argohealth.ReportTarget{Region: region, Cluster: "mc02", Bucket: bucket})
	if _, err := gate.Check("stage", "", ""); err == nil || !strings.Contains(err.Error(), "reports cluster "+region+"/mc02, but account "+mc01+" is tagged as "+region+"/mc01's") {
		t.Errorf("the gate after mc01 reported for mc02: %v", err)
	}
}
