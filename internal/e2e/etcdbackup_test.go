package e2e

import (
	"bytes"
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/regionctl/regionctl/internal/awsemu"
	"github.com/regionctl/regionctl/internal/render/iam"
)

// etcdBackupChecklist is the FAQ's disaster-recovery piece, asked through
// the IAM gate: the region's DR account, in an OU of its own, owns the
// snapshot bucket; a management cluster's etcd-backup role adds snapshots
// under its own account's prefix only, and can neither read nor delete
// them; no other role of its account, and nothing outside the region's
// management cluster OU, may write there.
func (e *env) etcdBackupChecklist(mc01, mc02, eksCluster string) {
	t := e.t
	ctx := context.Background()
	const bucket = "regionctl-etcd-backup-staging-" + region
	dr := e.accounts()["staging-"+region+"-dr"]
	if len(dr) != 1 {
		t.Fatalf("DR accounts of %s: %v", region, dr)
	}
	if ou := e.ouPath(dr[0]); ou != "/platform/staging/"+region+"/dr" {
		t.Errorf("the DR account is in %s", ou)
	}
	if owner := e.bucketOwner(bucket); owner != dr[0] {
		t.Fatalf("the snapshot bucket belongs to %q, not the DR account %s", owner, dr[0])
	}
	if _, ok := e.gate.BucketPolicy(bucket); !ok {
		t.Fatalf("the snapshot bucket has no policy")
	}
	// Each pod holds the role of its ServiceAccount's EKS Pod Identity
	// association in mc01's cluster.
	as := func(namespace, sa string) *s3.Client {
		creds, err := e.gate.PodIdentitySession(ctx, mc01, region, eksCluster, namespace, sa, sa+"-0")
		if err != nil {
			t.Fatalf("%s/%s: %v", namespace, sa, err)
		}
		return s3.NewFromConfig(awsemu.Config(e.gate.URL, region, creds), func(o *s3.Options) { o.UsePathStyle = true })
	}
	// The probes below provoke their denials.
	e.gate.Ledger().Expect(func(en awsemu.Entry) bool { return strings.Contains(en.Resource, ":::"+bucket) })
	backup := as("hypershift", "etcd-backup")
	operator := as("hypershift", "operator")
	_, issuerA := e.regionalOf(region)
	pipelineCfg, err := awsemu.WebIdentity(ctx, e.gate.URL, region, iam.RoleARN("aws", e.regionalAccount, iam.PipelineRoleName(region)), issuerA, e.platform.Namespace, iam.RegionalServiceAccount)
	if err != nil {
		t.Fatal(err)
	}
	pipeline := s3.NewFromConfig(pipelineCfg, func(o *s3.Options) { o.UsePathStyle = true })
	put := func(c *s3.Client, key string) error {
		_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader([]byte("snapshot"))})
		return err
	}
	if err := put(backup, mc01+"/etcd-2026-11-25.db"); err != nil {
		t.Errorf("mc01's etcd-backup role could not add a snapshot under its account: %v", err)
	}
	for _, tc := range []struct {
		what string
		err  error
	}{
		{"mc01's etcd-backup role writes under mc02's account", put(backup, mc02+"/etcd-2026-11-25.db")},
		{"mc01's etcd-backup role writes outside any account's prefix", put(backup, "etcd.db")},
		{"mc01's HyperShift operator adds a snapshot", put(operator, mc01+"/operator.db")},
		{"the regional pipeline adds a snapshot", put(pipeline, e.regionalAccount+"/pipeline.db")},
		{"mc01's etcd-backup role reads its snapshot", func() error {
			_, err := backup.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(mc01 + "/etcd-2026-11-25.db")})
			return err
		}()},
		{"mc01's etcd-backup role deletes its snapshot", func() error {
			_, err := backup.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(mc01 + "/etcd-2026-11-25.db")})
			return err
		}()},
		{"the regional pipeline deletes a snapshot", func() error {
			_, err := pipeline.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(mc01 + "/etcd-2026-11-25.db")})
			return err
		}()},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), "AccessDenied") {
			t.Errorf("%s: %v, want AccessDenied", tc.what, tc.err)
		}
	}
	if b, ok := e.object(bucket, mc01+"/etcd-2026-11-25.db"); !ok || string(b) != "snapshot" {
		t.Errorf("mc01's snapshot is not in the DR bucket: %q", b)
	}
}
