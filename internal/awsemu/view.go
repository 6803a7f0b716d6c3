package awsemu

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsiam "github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/organizations"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"

	"github.com/regionctl/regionctl/internal/iampolicy"
	"github.com/regionctl/regionctl/internal/render/iam"
)

// view reads what the gate needs to decide from moto itself, as an
// administrator of each account (moto hands out any account's credentials
// and checks no permission): roles with their policies, boundaries and
// tags, OIDC providers, bucket owners and policies, the organisation.
// What it read is kept until a request that could change it passes the
// gate (generation), so a decision always sees the current state.
type view struct {
	emulator string // moto's URL
	// policy is a bucket's policy (nil for none): the gate keeps them.
	policy func(bucket string) []byte

	mu         sync.Mutex
	generation int
	creds      map[string]aws.Credentials // account → administrator credentials
	roles      map[string]*roleView       // role ARN → role (nil: no such role)
	buckets    map[string]*bucketView     // bucket → owner and policy
	org        *orgView
	accounts   []string               // the organisation's
	guards     map[string]*guardrails // account → its SCPs and RCPs
	// orgGeneration counts the changes of the organisation (orgChanged);
	// guards holds what was read since the last.
	orgGeneration int
	// paths are the paths of the roles looked up by rolePath (role ARN
	// without its path → path), which a role keeps for its life.
	paths sync.Map
}

// rolePath is the path of the existing role arn names without one ("/"
// when it has none or does not exist): one GetRole per role, remembered,
// since IAM authorizes an action on a role on its ARN with its path.
func (v *view) rolePath(ctx context.Context, arn string) string {
	if p, ok := v.paths.Load(arn); ok {
		return p.(string)
	}
	cfg, err := v.admin(ctx, accountOf(arn))
	if err != nil {
		return "/"
	}
	got, err := awsiam.NewFromConfig(cfg).GetRole(ctx, &awsiam.GetRoleInput{RoleName: aws.String(arn[strings.LastIndex(arn, "/")+1:])})
	if err != nil || got.Role == nil {
		return "/"
	}
	p := aws.ToString(got.Role.Path)
	v.paths.Store(arn, p)
	return p
}

type roleView struct {
	ARN      string
	Trust    *iam.Document
	Policies []iam.Document // inline and attached
	Boundary *iam.Document
	Tags     map[string]string
}

type bucketView struct {
	Owner  string
	Policy *iam.Document
	// RestrictPublic is the bucket's public access block's
	// RestrictPublicBuckets: a public policy then admits no one outside
	// the owner's account.
	RestrictPublic bool
	// BlockPublicPolicy is its BlockPublicPolicy: S3 refuses a public
	// bucket policy.
	BlockPublicPolicy bool
}

type orgView struct {
	ID, Management, Root string
}

func newView(emulator string) *view {
	return &view{emulator: emulator, creds: map[string]aws.Credentials{}}
}

// changed forgets what was read: a request that may have changed IAM,
// bucket policies or the organisation passed the gate.
func (v *view) changed() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.generation++
	v.roles, v.buckets, v.org, v.accounts = nil, nil, nil, nil
}

// orgChanged forgets what was read of the organisation's guardrails: a
// request that may have changed its policies, OUs or accounts passed the
// gate. (IAM and S3 writes, far more frequent, leave them be.)
func (v *view) orgChanged() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.orgGeneration++
	v.guards = nil
}

// Account administrator credentials: "testing" is moto's default account;
// any other account's come from an STS AssumeRole sent to moto directly,
// which moto answers for any role ARN without looking at it.
func (v *view) admin(ctx context.Context, account string) (aws.Config, error) {
	v.mu.Lock()
	c, ok := v.creds[account]
	v.mu.Unlock()
	base := aws.Credentials{AccessKeyID: AccessKeyID, SecretAccessKey: SecretAccessKey}
	if !ok {
		if account == DefaultAccount {
			c = base
		} else {
			cfg := v.config(base)
			out, err := sts.NewFromConfig(cfg).AssumeRole(ctx, &sts.AssumeRoleInput{
				RoleArn: aws.String("arn:aws:iam::" + account + ":role/regionctl-iam-gate"), RoleSessionName: aws.String("regionctl-iam-gate")})
			if err != nil {
				return aws.Config{}, fmt.Errorf("the gate reaching account %s: %w", account, err)
			}
			c = aws.Credentials{AccessKeyID: aws.ToString(out.Credentials.AccessKeyId), SecretAccessKey: aws.ToString(out.Credentials.SecretAccessKey),
				SessionToken: aws.ToString(out.Credentials.SessionToken)}
		}
		v.mu.Lock()
		v.creds[account] = c
		v.mu.Unlock()
	}
	return v.config(c), nil
}

func (v *view) config(c aws.Credentials) aws.Config { return Config(v.emulator, "us-east-1", c) }

// role reads a role (nil when it does not exist).
func (v *view) role(ctx context.Context, arn string) (*roleView, error) {
	v.mu.Lock()
	if r, ok := v.roles[arn]; ok {
		v.mu.Unlock()
		return r, nil
	}
	gen := v.generation
	v.mu.Unlock()
	r, err := v.readRole(ctx, arn)
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.generation == gen {
		if v.roles == nil {
			v.roles = map[string]*roleView{}
		}
		v.roles[arn] = r
	}
	return r, nil
}

func (v *view) readRole(ctx context.Context, arn string) (*roleView, error) {
	account := accountOf(arn)
	name := arn[strings.LastIndex(arn, "/")+1:]
	cfg, err := v.admin(ctx, account)
	if err != nil {
		return nil, err
	}
	client := awsiam.NewFromConfig(cfg)
	got, err := client.GetRole(ctx, &awsiam.GetRoleInput{RoleName: aws.String(name)})
	if isCode(err, "NoSuchEntity") {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading role %s: %w", arn, err)
	}
	r := &roleView{ARN: arn, Tags: map[string]string{}}
	if r.Trust, err = decodeDoc(aws.ToString(got.Role.AssumeRolePolicyDocument)); err != nil {
		return nil, fmt.Errorf("the trust policy of %s: %w", arn, err)
	}
	for _, t := range got.Role.Tags {
		r.Tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	inline, err := client.ListRolePolicies(ctx, &awsiam.ListRolePoliciesInput{RoleName: aws.String(name)})
	if err != nil {
		return nil, err
	}
	for _, p := range inline.PolicyNames {
		doc, err := client.GetRolePolicy(ctx, &awsiam.GetRolePolicyInput{RoleName: aws.String(name), PolicyName: aws.String(p)})
		if err != nil {
			return nil, err
		}
		d, err := decodeDoc(aws.ToString(doc.PolicyDocument))
		if err != nil {
			return nil, fmt.Errorf("policy %s of %s: %w", p, arn, err)
		}
		r.Policies = append(r.Policies, *d)
	}
	attached, err := client.ListAttachedRolePolicies(ctx, &awsiam.ListAttachedRolePoliciesInput{RoleName: aws.String(name)})
	if err != nil {
		return nil, err
	}
	for _, p := range attached.AttachedPolicies {
		d, err := managedPolicy(ctx, client, aws.ToString(p.PolicyArn))
		if err != nil {
			return nil, fmt.Errorf("policy %s of %s: %w", aws.ToString(p.PolicyArn), arn, err)
		}
		r.Policies = append(r.Policies, *d)
	}
	if b := got.Role.PermissionsBoundary; b != nil && aws.ToString(b.PermissionsBoundaryArn) != "" {
		if r.Boundary, err = managedPolicy(ctx, client, aws.ToString(b.PermissionsBoundaryArn)); err != nil {
			return nil, fmt.Errorf("the boundary of %s: %w", arn, err)
		}
	}
	return r, nil
}

func managedPolicy(ctx context.Context, client *awsiam.Client, arn string) (*iam.Document, error) {
	p, err := client.GetPolicy(ctx, &awsiam.GetPolicyInput{PolicyArn: aws.String(arn)})
	if err != nil {
		return nil, err
	}
	ver, err := client.GetPolicyVersion(ctx, &awsiam.GetPolicyVersionInput{PolicyArn: aws.String(arn), VersionId: p.Policy.DefaultVersionId})
	if err != nil {
		return nil, err
	}
	return decodeDoc(aws.ToString(ver.PolicyVersion.Document))
}

// decodeDoc reads a document as IAM returns it (URL-encoded).
func decodeDoc(s string) (*iam.Document, error) {
	if strings.HasPrefix(s, "%7B") {
		if u, err := url.QueryUnescape(s); err == nil {
			s = u
		}
	}
	d, err := iampolicy.ParseAWS([]byte(s))
	if err != nil {
		return nil, err
	}
	return &d, nil
}

// oidcProvider finds the IAM OIDC provider of account whose URL is issuer
// (host and path, without https://); "" when there is none.
func (v *view) oidcProvider(ctx context.Context, account, issuer string) (string, error) {
	cfg, err := v.admin(ctx, account)
	if err != nil {
		return "", err
	}
	// moto has been seen to answer this with a body cut short while
	// Terraform makes the provider in another account: asked again.
	var out *awsiam.ListOpenIDConnectProvidersOutput
	for try := 0; ; try++ {
		out, err = awsiam.NewFromConfig(cfg).ListOpenIDConnectProviders(ctx, &awsiam.ListOpenIDConnectProvidersInput{})
		if err == nil {
			break
		}
		if try == 2 || ctx.Err() != nil {
			return "", err
		}
	}
	for _, p := range out.OpenIDConnectProviderList {
		if arn := aws.ToString(p.Arn); strings.HasSuffix(arn, ":oidc-provider/"+issuer) {
			return arn, nil
		}
	}
	return "", nil
}

// bucket reads a bucket's owner and policy (nil when it does not exist).
// accounts are where to look for it: moto keeps each account's buckets
// apart, and lists a bucket only to its owner.
func (v *view) bucket(ctx context.Context, name string, accounts []string) (*bucketView, error) {
	v.mu.Lock()
	if b, ok := v.buckets[name]; ok {
		v.mu.Unlock()
		return b, nil
	}
	gen := v.generation
	v.mu.Unlock()
	var found *bucketView
	for _, account := range accounts {
		cfg, err := v.admin(ctx, account)
		if err != nil {
			return nil, err
		}
		client := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
		list, err := client.ListBuckets(ctx, &s3.ListBucketsInput{})
		if err != nil {
			return nil, err
		}
		owned := false
		for _, b := range list.Buckets {
			owned = owned || aws.ToString(b.Name) == name
		}
		if !owned {
			continue
		}
		found = &bucketView{Owner: account}
		if pab, err := client.GetPublicAccessBlock(ctx, &s3.GetPublicAccessBlockInput{Bucket: aws.String(name)}); err == nil && pab.PublicAccessBlockConfiguration != nil {
			found.RestrictPublic = aws.ToBool(pab.PublicAccessBlockConfiguration.RestrictPublicBuckets)
			found.BlockPublicPolicy = aws.ToBool(pab.PublicAccessBlockConfiguration.BlockPublicPolicy)
		}
		if pol := v.policy(name); pol != nil {
			if found.Policy, err = decodeDoc(string(pol)); err != nil {
				return nil, fmt.Errorf("the policy of bucket %s: %w", name, err)
			}
		}
		break
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.generation == gen {
		if v.buckets == nil {
			v.buckets = map[string]*bucketView{}
		}
		v.buckets[name] = found
	}
	return found, nil
}

// organization reads the organisation (nil when there is none).
func (v *view) organization(ctx context.Context) (*orgView, error) {
	v.mu.Lock()
	if v.org != nil {
		defer v.mu.Unlock()
		return v.org, nil
	}
	v.mu.Unlock()
	cfg, err := v.admin(ctx, DefaultAccount)
	if err != nil {
		return nil, err
	}
	client := organizations.NewFromConfig(cfg)
	out, err := client.DescribeOrganization(ctx, &organizations.DescribeOrganizationInput{})
	if isCode(err, "AWSOrganizationsNotInUseException") {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	roots, err := client.ListRoots(ctx, &organizations.ListRootsInput{})
	if err != nil {
		return nil, err
	}
	o := &orgView{ID: aws.ToString(out.Organization.Id), Management: aws.ToString(out.Organization.MasterAccountId)}
	if len(roots.Roots) > 0 {
		o.Root = aws.ToString(roots.Roots[0].Id)
	}
	v.mu.Lock()
	v.org = o
	v.mu.Unlock()
	return o, nil
}

// orgTags reads the tags of an organisation resource (account, OU, root).
func (v *view) orgTags(ctx context.Context, id string) (map[string]string, error) {
	cfg, err := v.admin(ctx, DefaultAccount)
	if err != nil {
		return nil, err
	}
	out, err := organizations.NewFromConfig(cfg).ListTagsForResource(ctx, &organizations.ListTagsForResourceInput{ResourceId: aws.String(id)})
	if err != nil {
		return nil, err
	}
	tags := map[string]string{}
	for _, t := range out.Tags {
		tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return tags, nil
}

// orgPath is aws:ResourceOrgPaths of an account: o-x/r-x/ou-a/ou-b/.
func (v *view) orgPath(ctx context.Context, account string) (string, error) {
	o, err := v.organization(ctx)
	if err != nil || o == nil {
		return "", err
	}
	cfg, err := v.admin(ctx, DefaultAccount)
	if err != nil {
		return "", err
	}
	client := organizations.NewFromConfig(cfg)
	var chain []string
	child := account
	for i := 0; i < 8; i++ {
		out, err := client.ListParents(ctx, &organizations.ListParentsInput{ChildId: aws.String(child)})
		if err != nil {
			return "", err
		}
		if len(out.Parents) == 0 {
			break
		}
		id := aws.ToString(out.Parents[0].Id)
		chain = append([]string{id}, chain...)
		if strings.HasPrefix(id, "r-") {
			break
		}
		child = id
	}
	return o.ID + "/" + strings.Join(chain, "/") + "/", nil
}

func isCode(err error, code string) bool {
	var api smithy.APIError
	return errors.As(err, &api) && api.ErrorCode() == code
}

// orgAccounts lists the organisation's accounts (none without one).
func (v *view) orgAccounts(ctx context.Context) []string {
	v.mu.Lock()
	if v.accounts != nil {
		defer v.mu.Unlock()
		return v.accounts
	}
	v.mu.Unlock()
	cfg, err := v.admin(ctx, DefaultAccount)
	if err != nil {
		return nil
	}
	var out []string
	pages := organizations.NewListAccountsPaginator(organizations.NewFromConfig(cfg), &organizations.ListAccountsInput{})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			break
		}
		for _, a := range page.Accounts {
			out = append(out, aws.ToString(a.Id))
		}
	}
	v.mu.Lock()
	v.accounts = out
	v.mu.Unlock()
	return out
}
