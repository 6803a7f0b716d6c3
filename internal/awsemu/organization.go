package awsemu

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/organizations"
	orgtypes "github.com/aws/aws-sdk-go-v2/service/organizations/types"

	"github.com/regionctl/regionctl/internal/iamjudge"
	"github.com/regionctl/regionctl/internal/iampolicy"
	"github.com/regionctl/regionctl/internal/render/iam"
)

// The organisation's guardrails, as AWS Organizations applies them
// ("Service control policies" and "Resource control policies" in the
// Organizations User Guide): SCPs bind every principal of a member
// account, RCPs every resource of one, from the root down to the account;
// neither binds the management account. A level of the organisation
// always holds at least one SCP (AWS attaches FullAWSAccess and never lets
// the last one go): a level the emulator reports none for is read as
// holding FullAWSAccess.

var fullAccess = iamjudge.Document{Version: "2012-10-17", ID: "FullAWSAccess", Statement: []iamjudge.Statement{{Effect: "Allow",
	Action: iamjudge.Strings{"*"}, Resource: iamjudge.Strings{"*"}}}}

// guardrails are the control policies of an account, by type.
type guardrails struct {
	SCP, RCP []iamjudge.OrgLevel
}

// controlPolicies are the SCPs and RCPs over account, a level each from
// the root; none for the management account or outside an organisation.
func (v *view) controlPolicies(ctx context.Context, account string) (*guardrails, error) {
	o, err := v.organization(ctx)
	if err != nil || o == nil || account == "" || account == o.Management {
		return &guardrails{}, err
	}
	v.mu.Lock()
	if g, ok := v.guards[account]; ok {
		v.mu.Unlock()
		return g, nil
	}
	gen := v.orgGeneration
	v.mu.Unlock()
	if !slices.Contains(v.orgAccounts(ctx), account) {
		return &guardrails{}, nil // an account outside the organisation
	}
	path, err := v.orgPath(ctx, account)
	if err != nil {
		return nil, err
	}
	if !strings.Contains(path, "/r-") {
		return &guardrails{}, nil // not (or no longer) an account of the organisation
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	targets := append(parts[1:], account) // the root, the OUs, the account
	cfg, err := v.admin(ctx, DefaultAccount)
	if err != nil {
		return nil, err
	}
	client := organizations.NewFromConfig(cfg)
	g := &guardrails{}
	for _, t := range targets {
		for _, kind := range []orgtypes.PolicyType{orgtypes.PolicyTypeServiceControlPolicy, orgtypes.PolicyTypeResourceControlPolicy} {
			level := iamjudge.OrgLevel{ID: t}
			out, err := client.ListPoliciesForTarget(ctx, &organizations.ListPoliciesForTargetInput{TargetId: aws.String(t), Filter: kind})
			if err != nil {
				return nil, fmt.Errorf("the %s of %s: %w", kind, t, err)
			}
			for _, p := range out.Policies {
				if kind == orgtypes.PolicyTypeResourceControlPolicy && aws.ToString(p.Name) == "RCPFullAWSAccess" {
					// AWS's own, at every level: what an RCP level allows
					// when nothing of the organisation's denies.
					continue
				}
				d, err := client.DescribePolicy(ctx, &organizations.DescribePolicyInput{PolicyId: p.Id})
				if err != nil {
					return nil, err
				}
				doc, err := iampolicy.ParseAWS([]byte(aws.ToString(d.Policy.Content)))
				if err != nil {
					return nil, fmt.Errorf("the %s %s attached to %s: %w", kind, aws.ToString(p.Name), t, err)
				}
				if doc.ID == "" {
					doc.ID = aws.ToString(p.Name)
				}
				level.Policies = append(level.Policies, doc)
			}
			if kind == orgtypes.PolicyTypeServiceControlPolicy {
				if len(level.Policies) == 0 {
					level.Policies = []iamjudge.Document{fullAccess}
				}
				g.SCP = append(g.SCP, level)
			} else if len(level.Policies) > 0 {
				g.RCP = append(g.RCP, level)
			}
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.orgGeneration == gen {
		if v.guards == nil {
			v.guards = map[string]*guardrails{}
		}
		v.guards[account] = g
	}
	return g, nil
}

// orgFeatures is what the emulator models of the organisation's features
// that moto does not: centralized root access ("Centrally manage root
// access for member accounts", IAM User Guide) and the trusted access of
// AWS CloudFormation StackSets.
type orgFeatures struct {
	mu sync.Mutex
	// rootCredentials: RootCredentialsManagement is on; an account
	// created from then on has no root user credentials (rootless).
	rootCredentials, rootSessions, stackSets bool
	// iamTrusted: IAM's trusted access (iam.amazonaws.com), which
	// centralized root access needs and moto does not know.
	iamTrusted bool
	rootless   map[string]bool
}

// mendAnswer adds to moto's list of trusted services the one it does not
// know (IAM's) when the organisation turned it on.
func (f *orgFeatures) mendAnswer(req *request, answer []byte) []byte {
	if req.Service != "organizations" || req.Operation != "ListAWSServiceAccessForOrganization" {
		return answer
	}
	f.mu.Lock()
	on := f.iamTrusted
	f.mu.Unlock()
	if !on {
		return answer
	}
	var out map[string]any
	if json.Unmarshal(answer, &out) != nil {
		return answer
	}
	list, _ := out["EnabledServicePrincipals"].([]any)
	out["EnabledServicePrincipals"] = append(list, map[string]any{"ServicePrincipal": "iam.amazonaws.com"})
	b, err := json.Marshal(out)
	if err != nil {
		return answer
	}
	return b
}

func (f *orgFeatures) created(account string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rootCredentials {
		if f.rootless == nil {
			f.rootless = map[string]bool{}
		}
		f.rootless[account] = true
	}
}

// answer answers the requests about those features itself (moto knows
// none of them), after the gate authorized them; it reports whether it
// answered.
func (f *orgFeatures) answer(w http.ResponseWriter, org *orgView, req *request) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	var result string
	switch req.Service + ":" + req.Operation {
	case "organizations:EnableAWSServiceAccess":
		if req.str("ServicePrincipal") != "iam.amazonaws.com" {
			return false
		}
		f.iamTrusted = true
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.WriteHeader(200)
		_, _ = w.Write([]byte("{}"))
		return true
	case "iam:EnableOrganizationsRootCredentialsManagement":
		f.rootCredentials = true
	case "iam:EnableOrganizationsRootSessions":
		f.rootSessions = true
	case "iam:ListOrganizationsFeatures":
	case "cloudformation:ActivateOrganizationsAccess":
		f.stackSets = true
		result = " "
	case "cloudformation:DescribeOrganizationsAccess":
		status := "DISABLED"
		if f.stackSets {
			status = "ENABLED"
		}
		result = "<Status>" + status + "</Status>"
	default:
		return false
	}
	ns := "https://iam.amazonaws.com/doc/2010-05-08/"
	if req.Service == "iam" {
		var features string
		if f.rootCredentials {
			features += "<member>RootCredentialsManagement</member>"
		}
		if f.rootSessions {
			features += "<member>RootSessions</member>"
		}
		id := ""
		if org != nil {
			id = org.ID
		}
		result = "<OrganizationId>" + id + "</OrganizationId><EnabledFeatures>" + features + "</EnabledFeatures>"
	} else {
		ns = "http://cloudformation.amazonaws.com/doc/2010-05-15/"
		result = strings.TrimSpace(result)
	}
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(200)
	_, _ = fmt.Fprintf(w, `<%[1]sResponse xmlns="%[2]s"><%[1]sResult>%[3]s</%[1]sResult><ResponseMetadata><RequestId>regionctl-iam-gate</RequestId></ResponseMetadata></%[1]sResponse>`,
		req.Operation, ns, result)
	return true
}

// RootUser is the root user of account, as a test acting as it would
// sign in: its credentials, or an error when the account has none (it was
// created while the organisation managed root access centrally, so AWS
// made it without root user credentials).
func (g *Gate) RootUser(ctx context.Context, account string) (aws.Credentials, error) {
	g.features.mu.Lock()
	rootless := g.features.rootless[account]
	g.features.mu.Unlock()
	if rootless {
		return aws.Credentials{}, fmt.Errorf("the account %s has no root user credentials: it was created while the organisation manages root access centrally (no password, no access keys, no password recovery)", account)
	}
	cfg, err := g.view.admin(ctx, account)
	if err != nil {
		return aws.Credentials{}, err
	}
	c, err := cfg.Credentials.Retrieve(ctx)
	if err != nil {
		return aws.Credentials{}, err
	}
	// The emulator's own credentials of the account, attributed by the
	// gate to its root user.
	g.keys.add(&principal{AccessKey: c.AccessKeyID, Secret: c.SecretAccessKey, Account: account, ARN: iam.AccountRoot("aws", account), Root: true})
	return c, nil
}
