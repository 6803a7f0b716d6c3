package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/regionctl/regionctl/internal/iampolicy"
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
	acc, err := r.Cloud.EnsureAccount(ctx, Credentials{}, AccountSpec{Name: s.Account, Email: s.Email, OU: s.OU, Tags: s.AccountTags, CreateOU: s.CreateOU})
	if err != nil {
		return "", err
	}
	st.Account = acc.ID
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
	return outcome, nil
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
// the region's minting role, and bootstraps a new one: its
// ManagementClusterDeployRole and boundary, then its AccessRole sealed so
// that the minting role never reaches the account again.
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

	if acc.Tags[iam.SealedTag] == "true" {
		// The deploy role was made when the account was new; only the
		// central pipeline may change it now.
		return outcome + "; the account is sealed (" + iam.DeployRoleName + " was made when it was new)", nil
	}
	docs, err := r.documents(s.Documents, st)
	if err != nil {
		return "", err
	}
	access := iam.RoleARN(iam.Partition(p.Region), acc.ID, iam.AccessRole)
	boot, err := r.Cloud.AssumeRole(ctx, AssumeRequest{RoleARN: access, SessionName: s.SessionName, Base: minting, Policy: docs[DocBootstrapSession]})
	if err != nil {
		return "", fmt.Errorf("assuming %s of %s to bootstrap it (an account of the region's OU whose AccessRole was sealed without the %s tag needs the central pipeline's hand): %w", iam.AccessRole, acc.ID, iam.SealedTag, err)
	}
	if _, err := r.Cloud.EnsurePolicy(ctx, boot, iam.BoundaryName, docs[DocBoundary]); err != nil {
		return "", fmt.Errorf("the boundary %s in %s: %w", iam.BoundaryName, acc.ID, err)
	}
	created, err := r.Cloud.EnsureRole(ctx, boot, RoleSpec{Name: iam.DeployRoleName, TrustJSON: docs[DocDeployTrust],
		PolicyName: iam.DeployRoleName, PolicyJSON: docs[DocDeployPolicy],
		Tags: map[string]string{iam.RegionTag: p.Region, iam.ClusterTag: s.AccountTags[iam.ClusterTag], iam.EnvironmentTag: s.AccountTags[iam.EnvironmentTag]}})
	if err != nil {
		return "", fmt.Errorf("%s in %s: %w", iam.DeployRoleName, acc.ID, err)
	}
	if err := r.Cloud.SetTrust(ctx, boot, iam.AccessRole, docs[DocSealedTrust]); err != nil {
		return "", fmt.Errorf("sealing %s of %s: %w", iam.AccessRole, acc.ID, err)
	}
	if err := r.Cloud.TagAccount(ctx, minting, acc.ID, map[string]string{iam.SealedTag: "true"}); err != nil {
		return "", fmt.Errorf("marking %s sealed: %w", acc.ID, err)
	}
	if created {
		outcome += ", " + iam.DeployRoleName + " created"
	}
	return outcome + "; " + iam.AccessRole + " sealed", nil
}

// deployRoles keeps the deploy role of each sealed management cluster
// account of the region as rendered: once sealed, an account's AccessRole
// trusts only the central pipeline, so a change of the deploy role's
// documents reaches the account through it. Accounts not minted yet, or
// not sealed yet, are the regional pipeline's to bootstrap.
func (r *Runner) deployRoles(ctx context.Context, p *Plan, s Step, st *clusterState) (string, error) {
	st.set("pipeline_account_id", st.Account) // the regional account, whose pipeline role the deploy roles trust
	var updated, waiting []string
	for _, d := range s.DeployRoles {
		id, tags, err := r.Cloud.FindAccount(ctx, Credentials{}, d.Account)
		if err != nil {
			return "", err
		}
		if id == "" || tags[iam.SealedTag] != "true" {
			waiting = append(waiting, d.Cluster)
			continue
		}
		if want := d.Cluster[strings.LastIndex(d.Cluster, "/")+1:]; tags[iam.ClusterTag] != want || tags[iam.RegionTag] != p.Region {
			return "", fmt.Errorf("refusing the account %s (%s) for %s: it is tagged for %s/%s", d.Account, id, d.Cluster, tags[iam.RegionTag], tags[iam.ClusterTag])
		}
		docs, err := r.documents(d.Documents, st)
		if err != nil {
			return "", err
		}
		admin, err := r.Cloud.AssumeRole(ctx, AssumeRequest{RoleARN: iam.RoleARN(iam.Partition(p.Region), id, iam.AccessRole), SessionName: session(p.RequestID)})
		if err != nil {
			return "", fmt.Errorf("reaching the sealed account %s of %s: %w", id, d.Cluster, err)
		}
		if _, err := r.Cloud.EnsurePolicy(ctx, admin, iam.BoundaryName, docs[DocBoundary]); err != nil {
			return "", fmt.Errorf("the boundary in %s: %w", id, err)
		}
		if _, err := r.Cloud.EnsureRole(ctx, admin, RoleSpec{Name: iam.DeployRoleName, TrustJSON: docs[DocDeployTrust], PolicyName: iam.DeployRoleName,
			PolicyJSON: docs[DocDeployPolicy], Tags: map[string]string{iam.RegionTag: p.Region, iam.ClusterTag: tags[iam.ClusterTag], iam.EnvironmentTag: tags[iam.EnvironmentTag]}}); err != nil {
			return "", fmt.Errorf("%s in %s: %w", iam.DeployRoleName, id, err)
		}
		updated = append(updated, d.Cluster)
	}
	outcome := fmt.Sprintf("%d deploy roles as rendered", len(updated))
	if len(waiting) > 0 {
		outcome += fmt.Sprintf("; %s not bootstrapped by the regional pipeline yet", strings.Join(waiting, ", "))
	}
	return outcome, nil
}

// documents reads the rendered documents of a management cluster's account
// and fills in the ids only AWS knows.
func (r *Runner) documents(files map[string]string, st *clusterState) (map[string]string, error) {
	values := map[string]string{"pipeline_account_id": st.Values["pipeline_account_id"], "management_account_id": st.Values["management_account_id"]}
	out := map[string]string{}
	for k, rel := range files {
		b, err := os.ReadFile(filepath.Join(r.Dir, rel))
		if err != nil {
			return nil, fmt.Errorf("reading %s (run regionctl render): %w", rel, err)
		}
		filled := iampolicy.Substitute(b, values)
		if left := iampolicy.Placeholders(filled); len(left) > 0 {
			return nil, fmt.Errorf("%s still holds %v after filling in the account ids", rel, left)
		}
		if _, err := iampolicy.Parse(filled); err != nil {
			return nil, fmt.Errorf("%s: %w", rel, err)
		}
		out[k] = string(filled)
	}
	return out, nil
}
