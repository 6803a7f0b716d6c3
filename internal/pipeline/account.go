package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/regionctl/regionctl/internal/render/iam"
)

// ErrDenied is what the Cloud adapters wrap an AWS access denial in.
var ErrDenied = errors.New("access denied")

// centralAccount finds or mints the regional account with the central
// pipeline's own identity, which must be of the organisation's management
// account, and makes sure the region's OU of management clusters exists.
func (r *Runner) centralAccount(ctx context.Context, s Step, st *clusterState) (string, error) {
	org, err := r.Cloud.Organization(ctx, Credentials{})
	if err != nil {
		return "", fmt.Errorf("reading the organisation: %w", err)
	}
	me, err := r.Cloud.Caller(ctx, Credentials{})
	if err != nil {
		return "", err
	}
	if me.Account != org.Management {
		return "", fmt.Errorf("the central pipeline runs as %s, of account %s; it must run in the organisation's management account %s", me.ARN, me.Account, org.Management)
	}
	features, err := r.Cloud.EnsureGuardrailFeatures(ctx, Credentials{})
	if err != nil {
		return "", err
	}
	acc, err := r.Cloud.EnsureAccount(ctx, Credentials{}, AccountSpec{Name: s.Account, Email: s.Email, OU: s.OU, Tags: s.AccountTags, CreateOU: s.CreateOU})
	if err != nil {
		return "", err
	}
	st.Account = acc.ID
	regionalOU, err := r.Cloud.EnsureOU(ctx, Credentials{}, s.OU, false)
	if err != nil {
		return "", fmt.Errorf("the OU of the regional account: %w", err)
	}
	st.set("regional_ou_id", regionalOU)
	st.set("management_account_id", org.Management)
	st.set("organization_id", org.ID)
	st.set("root_id", org.RootID)
	st.set("management_ou_id", "")
	outcome := describe(acc, s.OU)
	if s.DRAccount != nil {
		dr, err := r.Cloud.EnsureAccount(ctx, Credentials{}, AccountSpec{Name: s.DRAccount.Name, Email: s.DRAccount.Email, OU: s.DRAccount.OU, Tags: s.DRAccount.Tags, CreateOU: true})
		if err != nil {
			return "", fmt.Errorf("the region's DR account %s: %w", s.DRAccount.Name, err)
		}
		st.set("dr_account_id", dr.ID)
		outcome += "; DR account: " + describe(dr, s.DRAccount.OU)
	}
	if s.ManagementOU != "" {
		ou, err := r.Cloud.EnsureOU(ctx, Credentials{}, s.ManagementOU, true)
		if err != nil {
			return "", fmt.Errorf("the OU of the region's management clusters: %w", err)
		}
		st.set("management_ou_id", ou)
		outcome += "; management cluster OU " + s.ManagementOU + " is " + ou
	}
	return outcome + "; " + features, nil
}

// readHandoff reads what the central pipeline's bootstrap published for
// the region, and the pipeline's own account, into st.
func (r *Runner) readHandoff(ctx context.Context, p *Plan, s Step, st *clusterState) (handoff, error) {
	var h handoff
	raw, err := r.Cloud.Parameter(ctx, Credentials{}, s.Handoff)
	if errors.Is(err, ErrNotFound) {
		return h, fmt.Errorf("the central pipeline has not bootstrapped %s (no parameter %s in the regional account); run `regionctl pipeline central --region %s` first", p.Region, s.Handoff, p.Region)
	}
	if err != nil {
		return h, fmt.Errorf("reading the central pipeline's handoff %s: %w", s.Handoff, err)
	}
	if err := json.Unmarshal([]byte(raw), &h); err != nil || h.Region != p.Region {
		return h, fmt.Errorf("the handoff parameter %s is not the one of %s: %q", s.Handoff, p.Region, raw)
	}
	if h.MintingRoleARN == "" {
		return h, fmt.Errorf("the central pipeline made no minting role for %s (it had no management cluster then); run `regionctl pipeline central --region %s`", p.Region, p.Region)
	}
	me, err := r.Cloud.Caller(ctx, Credentials{})
	if err != nil {
		return h, err
	}
	st.set("pipeline_account_id", me.Account)
	st.set("management_account_id", h.ManagementAccountID)
	st.set("organization_id", h.OrganizationID)
	st.set("management_ou_id", h.ManagementOUID)
	st.set("minting_role_arn", h.MintingRoleARN)
	st.set("platform_api_endpoint", h.PlatformAPIEndpoint)
	return h, nil
}

// assumeMinting assumes the region's minting role the handoff names, with
// the region's ExternalId and the request id as the session's one tag.
func (r *Runner) assumeMinting(ctx context.Context, p *Plan, s Step, h handoff) (Credentials, error) {
	minting, err := r.Cloud.AssumeRole(ctx, AssumeRequest{RoleARN: h.MintingRoleARN, ExternalID: s.ExternalID, SessionName: s.SessionName,
		Tags: map[string]string{iam.RequestIDTag: p.RequestID}})
	if err != nil {
		return Credentials{}, fmt.Errorf("assuming the region's minting role: %w", err)
	}
	return minting, nil
}

func describe(acc Account, ou string) string {
	outcome := "found " + acc.ID
	if acc.Created {
		outcome = "created " + acc.ID
	}
	if acc.Moved {
		outcome += ", moved to " + ou
	}
	return outcome
}

// handoff is what the central pipeline's bootstrap publishes for the
// regional pipeline of a region (terraform/central-bootstrap).
type handoff struct {
	Region              string `json:"region"`
	ManagementAccountID string `json:"management_account_id"`
	MintingRoleARN      string `json:"minting_role_arn"`
	OrganizationID      string `json:"organization_id"`
	ManagementOUID      string `json:"management_ou_id"`
	CentralStateBucket  string `json:"central_state_bucket"`
	PlatformAPIEndpoint string `json:"platform_api_endpoint"`
}

// regionalAccount finds or mints a management cluster's account through
// the region's minting role, places a new one in the region's OU and
// marks it placed, then waits (bounded) for AWS CloudFormation to deploy
// the deploy role there: the region's StackSet does it for every account
// that lands in the OU. No regional principal ever assumes an
// administrator role of the account.
func (r *Runner) regionalAccount(ctx context.Context, p *Plan, s Step, st *clusterState) (string, error) {
	h, err := r.readHandoff(ctx, p, s, st)
	if err != nil {
		return "", err
	}
	minting, err := r.assumeMinting(ctx, p, s, h)
	if err != nil {
		return "", err
	}
	acc, err := r.Cloud.EnsureAccount(ctx, minting, AccountSpec{Name: s.Account, Email: s.Email, OU: s.OU, Tags: s.AccountTags})
	if err != nil {
		return "", err
	}
	st.Account = acc.ID
	outcome := describe(acc, s.OU)
	if acc.Tags[iam.SealedTag] != "true" {
		// Placed: no regional principal may move it out again.
		mark := map[string]string{iam.RegionTag: s.AccountTags[iam.RegionTag], iam.EnvironmentTag: s.AccountTags[iam.EnvironmentTag], iam.SealedTag: "true"}
		if err := r.Cloud.TagAccount(ctx, minting, acc.ID, mark); err != nil {
			return "", fmt.Errorf("marking %s placed in %s: %w", acc.ID, s.OU, err)
		}
		outcome += "; marked placed"
	}
	waited, err := r.waitDeployRole(ctx, p, s, acc.ID)
	if err != nil {
		return "", err
	}
	if waited > 0 {
		outcome += fmt.Sprintf("; %s deployed by %s after %s", iam.DeployRoleName, s.StackSet, waited.Round(time.Second))
	}
	return outcome, nil
}

// waitDeployRole waits until the deploy role of account can be assumed:
// AWS CloudFormation deploys it after the account lands in the region's
// OU, a few minutes on AWS. The wait is bounded (DeployRoleWait, default
// 10 minutes); past it the run stops, naming the StackSet to look at.
func (r *Runner) waitDeployRole(ctx context.Context, p *Plan, s Step, account string) (time.Duration, error) {
	start := r.now()
	wait := r.DeployRoleWait
	if wait == 0 {
		wait = 10 * time.Minute
	}
	every := min(r.poll(), max(wait/10, 10*time.Millisecond))
	arn := iam.RoleARN(iam.Partition(p.Region), account, iam.DeployRoleName)
	for {
		_, err := r.Cloud.AssumeRole(ctx, AssumeRequest{RoleARN: arn, ExternalID: s.ExternalID, SessionName: s.SessionName,
			Tags: map[string]string{iam.RequestIDTag: p.RequestID}})
		if err == nil {
			return r.now().Sub(start), nil
		}
		if !errors.Is(err, ErrDenied) {
			return 0, fmt.Errorf("assuming %s: %w", arn, err)
		}
		if r.now().Sub(start) >= wait {
			return 0, fmt.Errorf("%s of %s cannot be assumed %s after the account was placed in %s: AWS CloudFormation deploys it there from the StackSet %s of the management account (made by the central pipeline: run `regionctl pipeline central --region %s`, then look at the StackSet's instances): %w",
				iam.DeployRoleName, account, wait, s.OU, s.StackSet, p.Region, err)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(every):
		}
	}
}
