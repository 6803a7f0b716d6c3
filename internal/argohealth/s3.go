package argohealth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/organizations"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/regionctl/regionctl/internal/render/iam"
)

// Publisher puts a report into the region's health bucket with the
// credentials the pod holds (its ServiceAccount's EKS Pod Identity
// association): under the account's own prefix, which the role's policy
// and the bucket's are both limited to.
type Publisher struct {
	S3 interface {
		PutObject(context.Context, *s3.PutObjectInput, ...func(*s3.Options)) (*s3.PutObjectOutput, error)
	}
	STS interface {
		GetCallerIdentity(context.Context, *sts.GetCallerIdentityInput, ...func(*sts.Options)) (*sts.GetCallerIdentityOutput, error)
	}
	Bucket string
}

// Publish writes r and returns where it went.
func (p *Publisher) Publish(ctx context.Context, r Report) (string, error) {
	id, err := p.STS.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		return "", fmt.Errorf("asking STS which account this pod's role is in: %w", err)
	}
	account := aws.ToString(id.Account)
	key := ReportKey(account)
	if !reportKeyRE.MatchString(key) {
		return "", fmt.Errorf("STS answered account %q, not a 12-digit account id", account)
	}
	body, err := json.Marshal(r)
	if err != nil {
		return "", err
	}
	if _, err := p.S3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(p.Bucket), Key: aws.String(key), Body: bytes.NewReader(body),
		ContentType: aws.String("application/json")}); err != nil {
		return "", fmt.Errorf("putting the report into s3://%s/%s: %w", p.Bucket, key, err)
	}
	return "s3://" + p.Bucket + "/" + key, nil
}

// ReportTarget is one cluster of a sector and its region's health bucket.
type ReportTarget struct {
	Region, Cluster, Bucket string
}

// Reader is what the gate needs of S3.
type Reader interface {
	ListObjectsV2(context.Context, *s3.ListObjectsV2Input, ...func(*s3.Options)) (*s3.ListObjectsV2Output, error)
	GetObject(context.Context, *s3.GetObjectInput, ...func(*s3.Options)) (*s3.GetObjectOutput, error)
}

// Accounts is what the gate needs of Organizations: an account's tags.
type Accounts interface {
	ListTagsForResource(context.Context, *organizations.ListTagsForResourceInput, ...func(*organizations.Options)) (*organizations.ListTagsForResourceOutput, error)
}

// ReportGate implements rollout.Health from the reports clusters put into
// their regions' health buckets: each cluster of the sector must have
// exactly one report, written within MaxAge by S3's clock (the object's
// LastModified, which the writer cannot set), by the account Organizations
// tags as that cluster's (regionctl:region, regionctl:cluster, set when the
// account was minted), whose Applications pass as Gate's do. The bucket's
// policy keeps each account to its own prefix; the tags keep an account to
// its own cluster, so a cluster cannot vouch for a sibling that has not
// reported yet.
type ReportGate struct {
	// Client carries the repository the synced revisions are checked
	// against; its server and token are not used.
	Client   Client
	S3       Reader
	Accounts Accounts
	Targets  func(sector string) ([]ReportTarget, error)
	MaxAge   time.Duration
	Now      func() time.Time
	// Hint is added to an error reading a bucket: how to read it.
	Hint string
}

// stored is a report as the bucket holds it.
type stored struct {
	Report
	Key      string
	Modified time.Time
}

// reports reads every report of a bucket, keyed by the cluster each
// names; a cluster two accounts claim, or a report that does not decode,
// is an error of that cluster or of the bucket.
func (g *ReportGate) reports(ctx context.Context, bucket, region string) (map[string][]stored, error) {
	out := map[string][]stored{}
	inRegion := func(o *s3.Options) { o.Region = region }
	var token *string
	for {
		page, err := g.S3.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), ContinuationToken: token}, inRegion)
		if err != nil {
			return nil, fmt.Errorf("listing s3://%s: %w", bucket, err)
		}
		for _, o := range page.Contents {
			key := aws.ToString(o.Key)
			if !reportKeyRE.MatchString(key) {
				continue
			}
			r, err := g.read(ctx, bucket, key, inRegion)
			if err != nil {
				return nil, err
			}
			if r.Region != region {
				return nil, fmt.Errorf("s3://%s/%s reports cluster %s of region %s into the bucket of %s", bucket, key, r.Cluster, r.Region, region)
			}
			if err := g.owns(ctx, strings.TrimSuffix(key, "/"+ReportObject), r); err != nil {
				return nil, fmt.Errorf("s3://%s/%s: %w", bucket, key, err)
			}
			out[r.Cluster] = append(out[r.Cluster], stored{Report: r, Key: key, Modified: aws.ToTime(o.LastModified)})
		}
		if !aws.ToBool(page.IsTruncated) {
			return out, nil
		}
		token = page.NextContinuationToken
	}
}

// owns checks that account is, by its Organizations tags, the account of
// the cluster r reports on.
func (g *ReportGate) owns(ctx context.Context, account string, r Report) error {
	tags := map[string]string{}
	var token *string
	for {
		out, err := g.Accounts.ListTagsForResource(ctx, &organizations.ListTagsForResourceInput{ResourceId: aws.String(account), NextToken: token})
		if err != nil {
			return fmt.Errorf("reading the tags of account %s: %w", account, err)
		}
		for _, t := range out.Tags {
			tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
		}
		if token = out.NextToken; token == nil {
			break
		}
	}
	if tags[iam.RegionTag] != r.Region || tags[iam.ClusterTag] != r.Cluster {
		return fmt.Errorf("reports cluster %s/%s, but account %s is tagged as %s/%s's", r.Region, r.Cluster, account, orNone(tags[iam.RegionTag]), orNone(tags[iam.ClusterTag]))
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func (g *ReportGate) read(ctx context.Context, bucket, key string, opts ...func(*s3.Options)) (Report, error) {
	obj, err := g.S3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}, opts...)
	if err != nil {
		return Report{}, fmt.Errorf("reading s3://%s/%s: %w", bucket, key, err)
	}
	defer obj.Body.Close()
	body, err := io.ReadAll(io.LimitReader(obj.Body, maxReport+1))
	if err != nil {
		return Report{}, fmt.Errorf("reading s3://%s/%s: %w", bucket, key, err)
	}
	if len(body) > maxReport {
		return Report{}, fmt.Errorf("s3://%s/%s is over %d bytes: not a report", bucket, key, maxReport)
	}
	var r Report
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Report{}, fmt.Errorf("s3://%s/%s is not a report: %w", bucket, key, err)
	}
	if r.Version != ReportVersion {
		return Report{}, fmt.Errorf("s3://%s/%s is a report of version %d; this regionctl reads version %d", bucket, key, r.Version, ReportVersion)
	}
	return r, nil
}

// Check implements rollout.Health.
func (g *ReportGate) Check(sector, component, commit string) (string, error) {
	ctx := context.Background()
	targets, err := g.Targets(sector)
	if err != nil {
		return "", err
	}
	if len(targets) == 0 {
		return "", fmt.Errorf("sector %s has no cluster to ask", sector)
	}
	byBucket := map[string]map[string][]stored{}
	now := g.Now()
	var blocked []string
	n := 0
	for _, t := range targets {
		if _, ok := byBucket[t.Bucket]; !ok {
			rs, err := g.reports(ctx, t.Bucket, t.Region)
			if err != nil {
				if g.Hint != "" {
					err = fmt.Errorf("%w\n%s", err, g.Hint)
				}
				return "", err
			}
			byBucket[t.Bucket] = rs
		}
		id := t.Region + "/" + t.Cluster
		all := byBucket[t.Bucket][t.Cluster]
		// A report past MaxAge counts for nothing: not as the cluster's
		// health, nor as a second claim (the account of a cluster of this
		// name that was deleted and made again may keep its tags).
		var rs []stored
		var newest *stored
		for i, r := range all {
			if now.Sub(r.Modified) <= g.MaxAge {
				rs = append(rs, r)
			}
			if newest == nil || r.Modified.After(newest.Modified) {
				newest = &all[i]
			}
		}
		switch {
		case newest == nil:
			blocked = append(blocked, fmt.Sprintf("%s: no report in s3://%s (its argocd-health-reporter has not reported)", id, t.Bucket))
			continue
		case len(rs) == 0:
			blocked = append(blocked, fmt.Sprintf("%s: its last report (s3://%s/%s) is %s old, more than %s", id, t.Bucket, newest.Key, now.Sub(newest.Modified).Round(time.Second), g.MaxAge))
			continue
		case len(rs) > 1:
			keys := make([]string, len(rs))
			for i, r := range rs {
				keys[i] = r.Key
			}
			sort.Strings(keys)
			blocked = append(blocked, fmt.Sprintf("%s: reported by more than one account (%s)", id, strings.Join(keys, ", ")))
			continue
		}
		r := rs[0]
		var apps, selected []Application
		for _, a := range r.Applications {
			if a.Metadata.Labels["sector"] != sector {
				continue
			}
			apps = append(apps, a)
			if component == "" || a.Metadata.Labels["component"] == component {
				selected = append(selected, a)
			}
		}
		if msg, ok := g.Client.verdict(id, " in s3://"+t.Bucket+"/"+r.Key, selected, apps, component, commit); !ok {
			blocked = append(blocked, msg)
			continue
		}
		n += len(selected)
	}
	if len(blocked) > 0 {
		return "", errors.New(blockedMessage(blocked, len(targets), sector))
	}
	return fmt.Sprintf("%d Applications on %d clusters of %s Healthy and Synced, as they reported", n, len(targets), sector), nil
}
