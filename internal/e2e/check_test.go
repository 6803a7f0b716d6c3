package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/url"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/organizations"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/regionctl/regionctl/internal/awsemu"
)

// accounts maps each account name to its ids (more than one is a bug).
func (e *env) accounts() map[string][]string {
	e.t.Helper()
	out, err := organizations.NewFromConfig(e.awsConfig()).ListAccounts(context.Background(), &organizations.ListAccountsInput{})
	if err != nil {
		e.t.Fatal(err)
	}
	m := map[string][]string{}
	for _, a := range out.Accounts {
		m[aws.ToString(a.Name)] = append(m[aws.ToString(a.Name)], aws.ToString(a.Id))
	}
	return m
}

// ouPath is the OU path of an account, such as /platform/staging.
func (e *env) ouPath(account string) string {
	e.t.Helper()
	p, err := awsemu.OUPath(context.Background(), organizations.NewFromConfig(e.awsConfig()), account)
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

// in returns a configuration acting in account through its bootstrap role.
func (e *env) in(account string) aws.Config {
	e.t.Helper()
	cfg, err := awsemu.InAccount(context.Background(), e.awsConfig(), account)
	if err != nil {
		e.t.Fatal(err)
	}
	return cfg
}

// role returns a role's trust policy and attached policy ARNs, or ok false.
func (e *env) role(account, name string) (trust string, attached []string, ok bool) {
	e.t.Helper()
	client := iam.NewFromConfig(e.in(account))
	out, err := client.GetRole(context.Background(), &iam.GetRoleInput{RoleName: aws.String(name)})
	if err != nil {
		return "", nil, false
	}
	trust, _ = url.QueryUnescape(aws.ToString(out.Role.AssumeRolePolicyDocument))
	pols, err := client.ListAttachedRolePolicies(context.Background(), &iam.ListAttachedRolePoliciesInput{RoleName: aws.String(name)})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, p := range pols.AttachedPolicies {
		attached = append(attached, aws.ToString(p.PolicyArn))
	}
	return trust, attached, true
}

// object reads an S3 object, or ok false.
func (e *env) object(bucket, key string) ([]byte, bool) {
	e.t.Helper()
	client := s3.NewFromConfig(e.awsConfig(), func(o *s3.Options) { o.UsePathStyle, o.DisableLogOutputChecksumValidationSkipped = true, true })
	out, err := client.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return nil, false
	}
	defer out.Body.Close()
	b, _ := io.ReadAll(out.Body)
	return b, true
}

// stateResources lists "type.name[index]" of every resource instance in
// a state object.
func (e *env) stateResources(bucket, key string) []string {
	e.t.Helper()
	b, ok := e.object(bucket, key)
	if !ok {
		e.t.Fatalf("no state s3://%s/%s", bucket, key)
	}
	var st struct {
		Resources []struct {
			Type, Name string
			Instances  []struct {
				IndexKey any `json:"index_key"`
			}
		}
	}
	if err := json.Unmarshal(b, &st); err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, r := range st.Resources {
		for range r.Instances {
			out = append(out, r.Type+"."+r.Name)
		}
	}
	sort.Strings(out)
	return out
}

// stateOutputs are the string outputs of a state object.
func (e *env) stateOutputs(bucket, key string) map[string]string {
	e.t.Helper()
	b, ok := e.object(bucket, key)
	if !ok {
		e.t.Fatalf("no state s3://%s/%s", bucket, key)
	}
	var st struct {
		Outputs map[string]struct{ Value any } `json:"outputs"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		e.t.Fatal(err)
	}
	out := map[string]string{}
	for k, v := range st.Outputs {
		if s, ok := v.Value.(string); ok {
			out[k] = s
		}
	}
	return out
}

func (e *env) bucketExists(bucket string) bool {
	client := s3.NewFromConfig(e.awsConfig(), func(o *s3.Options) { o.UsePathStyle = true })
	_, err := client.HeadBucket(context.Background(), &s3.HeadBucketInput{Bucket: aws.String(bucket)})
	return err == nil
}

// bucketOwner is the account whose buckets list bucket ("" for none).
func (e *env) bucketOwner(bucket string) string {
	e.t.Helper()
	candidates := []string{awsemu.DefaultAccount}
	for _, ids := range e.accounts() {
		candidates = append(candidates, ids...)
	}
	for _, acct := range candidates {
		cfg := e.awsConfig()
		if acct != awsemu.DefaultAccount {
			cfg = e.in(acct)
		}
		out, err := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true }).ListBuckets(context.Background(), &s3.ListBucketsInput{})
		if err != nil {
			e.t.Fatal(err)
		}
		for _, b := range out.Buckets {
			if aws.ToString(b.Name) == bucket {
				return acct
			}
		}
	}
	return ""
}

// orgPath is aws:PrincipalOrgPaths of an account: o-x/r-x/ou-a/ou-b/.
func (e *env) orgPath(account string) string {
	e.t.Helper()
	ctx := context.Background()
	orgs := e.orgs()
	org, err := orgs.DescribeOrganization(ctx, &organizations.DescribeOrganizationInput{})
	if err != nil {
		e.t.Fatal(err)
	}
	var chain []string
	for child := account; ; {
		out, err := orgs.ListParents(ctx, &organizations.ListParentsInput{ChildId: aws.String(child)})
		if err != nil || len(out.Parents) != 1 {
			e.t.Fatalf("the parent of %s: %v %v", child, out, err)
		}
		child = aws.ToString(out.Parents[0].Id)
		chain = append([]string{child}, chain...)
		if strings.HasPrefix(child, "r-") {
			break
		}
	}
	return aws.ToString(org.Organization.Id) + "/" + strings.Join(chain, "/") + "/"
}
