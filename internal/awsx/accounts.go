package awsx

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/organizations"
	orgtypes "github.com/aws/aws-sdk-go-v2/service/organizations/types"

	"github.com/regionctl/regionctl/internal/pipeline"
)

// EnsureAccount finds the account by name or creates it, then makes sure
// it sits in spec.OU (creating missing OUs when spec.CreateOU). An account
// found by name is adopted only when its tags name the spec's region,
// environment and cluster. A CreateAccount request still in progress from
// an earlier run is resumed rather than repeated, so a re-run never makes
// a second account of the same name.
func (c *Client) EnsureAccount(ctx context.Context, creds pipeline.Credentials, spec pipeline.AccountSpec) (pipeline.Account, error) {
	org := c.orgs(creds)
	var acc pipeline.Account
	id, err := findAccount(ctx, org, spec.Name)
	if err != nil {
		return acc, err
	}
	if id == "" {
		requestID, err := pendingRequest(ctx, org, spec.Name)
		if err != nil {
			return acc, err
		}
		if requestID == "" {
			in := &organizations.CreateAccountInput{AccountName: aws.String(spec.Name), Email: aws.String(spec.Email)}
			for _, k := range slices.Sorted(maps.Keys(spec.Tags)) {
				in.Tags = append(in.Tags, orgtypes.Tag{Key: aws.String(k), Value: aws.String(spec.Tags[k])})
			}
			// CreateAccount is not idempotent: a retried call whose first
			// answer was lost makes a second account. It is tried once; a
			// re-run finds the account (or the request) by name instead.
			out, err := org.CreateAccount(ctx, in, func(o *organizations.Options) { o.RetryMaxAttempts = 1 })
			if err != nil {
				return acc, fmt.Errorf("creating the account %s (not retried; a re-run finds it by name if AWS made it): %w", spec.Name, denied(err))
			}
			requestID = aws.ToString(out.CreateAccountStatus.Id)
		}
		if id, err = c.waitCreated(ctx, org, spec.Name, requestID); err != nil {
			return acc, err
		}
		acc.Created = true
	}
	acc.ID = id
	if acc.Tags, err = checkTags(ctx, org, id, spec); err != nil {
		return acc, err
	}
	if spec.OU == "" {
		return acc, nil
	}
	ou, err := ensureOUPath(ctx, org, spec.OU, spec.CreateOU)
	if err != nil {
		return acc, err
	}
	parents, err := org.ListParents(ctx, &organizations.ListParentsInput{ChildId: aws.String(id)})
	if err != nil {
		return acc, fmt.Errorf("finding the OU of %s: %w", id, err)
	}
	if len(parents.Parents) == 0 {
		return acc, fmt.Errorf("the account %s has no parent in the organisation", id)
	}
	if from := aws.ToString(parents.Parents[0].Id); from != ou {
		// An account another run of the region created and left in the
		// root becomes this run's to move: a regional minting role moves
		// only the account its own run tags (its session's request id).
		if id := spec.Tags["regionctl:request-id"]; id != "" && acc.Tags["regionctl:request-id"] != id {
			claim := map[string]string{"regionctl:request-id": id}
			for _, k := range []string{"regionctl:region", "regionctl:environment"} {
				claim[k] = spec.Tags[k]
			}
			if err := c.TagAccount(ctx, creds, acc.ID, claim); err != nil {
				return acc, fmt.Errorf("claiming %s for this run before moving it: %w", acc.ID, err)
			}
			acc.Tags["regionctl:request-id"] = id
		}
		if _, err := org.MoveAccount(ctx, &organizations.MoveAccountInput{AccountId: aws.String(id), SourceParentId: aws.String(from), DestinationParentId: aws.String(ou)}); err != nil {
			return acc, fmt.Errorf("moving %s to %s: %w", id, spec.OU, denied(err))
		}
		acc.Moved = true
	}
	return acc, nil
}

// adoptTags are the tags an account found by name must carry, equal to
// the spec's, to be adopted.
var adoptTags = []string{"regionctl:region", "regionctl:environment", "regionctl:cluster"}

// checkTags refuses an account found by name that is not tagged for the
// spec's region, environment and cluster: a name alone never hands a
// pipeline another cluster's (or an unrelated) account.
func checkTags(ctx context.Context, org *organizations.Client, id string, spec pipeline.AccountSpec) (map[string]string, error) {
	out, err := org.ListTagsForResource(ctx, &organizations.ListTagsForResourceInput{ResourceId: aws.String(id)})
	if err != nil {
		return nil, fmt.Errorf("reading the tags of %s: %w", id, denied(err))
	}
	have := map[string]string{}
	for _, t := range out.Tags {
		have[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	if err := adoptable(spec, id, have); err != nil {
		return nil, err
	}
	return have, nil
}

// adoptable refuses an account whose tags have does not name the spec's
// region, environment and cluster, each.
func adoptable(spec pipeline.AccountSpec, id string, have map[string]string) error {
	for _, k := range adoptTags {
		if want, ok := spec.Tags[k]; ok && have[k] != want {
			got := have[k]
			if got == "" {
				got = "(no tag)"
			}
			return fmt.Errorf("refusing the account %s (%s): its tag %s is %s, not %s; an account is adopted only when its tags name this region, environment and cluster", spec.Name, id, k, got, want)
		}
	}
	return nil
}

// FindAccount finds an account by name and reads its tags; id is "" when
// no account has that name.
func (c *Client) FindAccount(ctx context.Context, creds pipeline.Credentials, name string) (string, map[string]string, error) {
	org := c.orgs(creds)
	id, err := findAccount(ctx, org, name)
	if err != nil || id == "" {
		return "", nil, err
	}
	out, err := org.ListTagsForResource(ctx, &organizations.ListTagsForResourceInput{ResourceId: aws.String(id)})
	if err != nil {
		return "", nil, fmt.Errorf("reading the tags of %s: %w", id, denied(err))
	}
	tags := map[string]string{}
	for _, t := range out.Tags {
		tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return id, tags, nil
}

// TagAccount tags an account of the organisation.
func (c *Client) TagAccount(ctx context.Context, creds pipeline.Credentials, id string, tags map[string]string) error {
	in := &organizations.TagResourceInput{ResourceId: aws.String(id)}
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		in.Tags = append(in.Tags, orgtypes.Tag{Key: aws.String(k), Value: aws.String(tags[k])})
	}
	if _, err := c.orgs(creds).TagResource(ctx, in); err != nil {
		return fmt.Errorf("tagging %s: %w", id, denied(err))
	}
	return nil
}

// Organization reads the organisation's id, root and management account.
func (c *Client) Organization(ctx context.Context, creds pipeline.Credentials) (pipeline.Org, error) {
	org := c.orgs(creds)
	out, err := org.DescribeOrganization(ctx, &organizations.DescribeOrganizationInput{})
	if err != nil {
		return pipeline.Org{}, denied(err)
	}
	roots, err := org.ListRoots(ctx, &organizations.ListRootsInput{})
	if err != nil {
		return pipeline.Org{}, fmt.Errorf("listing the organisation's roots: %w", denied(err))
	}
	if len(roots.Roots) == 0 {
		return pipeline.Org{}, fmt.Errorf("the organisation has no root")
	}
	return pipeline.Org{ID: aws.ToString(out.Organization.Id), RootID: aws.ToString(roots.Roots[0].Id), Management: aws.ToString(out.Organization.MasterAccountId)}, nil
}

// EnsureOU returns the id of an OU path, creating what is missing when
// create is set.
func (c *Client) EnsureOU(ctx context.Context, creds pipeline.Credentials, path string, create bool) (string, error) {
	return ensureOUPath(ctx, c.orgs(creds), path, create)
}

func findAccount(ctx context.Context, org *organizations.Client, name string) (string, error) {
	var found []string
	pages := organizations.NewListAccountsPaginator(org, &organizations.ListAccountsInput{})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return "", fmt.Errorf("listing the organisation's accounts: %w", err)
		}
		for _, a := range page.Accounts {
			if aws.ToString(a.Name) == name && a.State != orgtypes.AccountStateClosed && a.State != orgtypes.AccountStatePendingClosure {
				found = append(found, aws.ToString(a.Id))
			}
		}
	}
	if len(found) > 1 {
		sort.Strings(found)
		return "", fmt.Errorf("%d accounts are named %s (%s); regionctl finds accounts by name, so close all but one", len(found), name, strings.Join(found, ", "))
	}
	if len(found) == 1 {
		return found[0], nil
	}
	return "", nil
}

// pendingRequest is the id of a CreateAccount request for name still in
// progress, left by an earlier run.
func pendingRequest(ctx context.Context, org *organizations.Client, name string) (string, error) {
	pages := organizations.NewListCreateAccountStatusPaginator(org, &organizations.ListCreateAccountStatusInput{States: []orgtypes.CreateAccountState{orgtypes.CreateAccountStateInProgress}})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return "", fmt.Errorf("listing CreateAccount requests in progress: %w", err)
		}
		for _, s := range page.CreateAccountStatuses {
			if aws.ToString(s.AccountName) == name {
				return aws.ToString(s.Id), nil
			}
		}
	}
	return "", nil
}

// waitCreated polls DescribeCreateAccountStatus until the request ends or
// the bounded wait runs out.
func (c *Client) waitCreated(ctx context.Context, org *organizations.Client, name, requestID string) (string, error) {
	deadline := time.Now().Add(c.opts.AccountWait)
	every := min(c.opts.PollEvery, max(c.opts.AccountWait/5, 100*time.Millisecond))
	for {
		out, err := org.DescribeCreateAccountStatus(ctx, &organizations.DescribeCreateAccountStatusInput{CreateAccountRequestId: aws.String(requestID)})
		if err != nil {
			return "", fmt.Errorf("polling the creation of %s (request %s): %w", name, requestID, err)
		}
		st := out.CreateAccountStatus
		switch st.State {
		case orgtypes.CreateAccountStateSucceeded:
			return aws.ToString(st.AccountId), nil
		case orgtypes.CreateAccountStateFailed:
			return "", fmt.Errorf("AWS Organizations failed to create %s (request %s): %s", name, requestID, st.FailureReason)
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("the account %s is still being created after %s (request %s); re-run later: the request is resumed, not repeated", name, c.opts.AccountWait, requestID)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(every):
		}
	}
}

// ensureOUPath finds (or, with create, creates) each OU of path (such as
// /platform/staging) below the organisation's root and returns the last
// one's id.
func ensureOUPath(ctx context.Context, org *organizations.Client, path string, create bool) (string, error) {
	roots, err := org.ListRoots(ctx, &organizations.ListRootsInput{})
	if err != nil {
		return "", fmt.Errorf("listing the organisation's roots: %w", err)
	}
	if len(roots.Roots) == 0 {
		return "", fmt.Errorf("the organisation has no root")
	}
	parent := aws.ToString(roots.Roots[0].Id)
	for _, name := range strings.Split(strings.Trim(path, "/"), "/") {
		if name == "" {
			continue
		}
		id, err := childOU(ctx, org, parent, name)
		if err != nil {
			return "", err
		}
		if id == "" && !create {
			return "", fmt.Errorf("the OU %s of %s does not exist; the central pipeline of the region creates it", name, path)
		}
		if id == "" {
			out, err := org.CreateOrganizationalUnit(ctx, &organizations.CreateOrganizationalUnitInput{ParentId: aws.String(parent), Name: aws.String(name)})
			if err != nil {
				return "", fmt.Errorf("creating the OU %s of %s: %w", name, path, err)
			}
			id = aws.ToString(out.OrganizationalUnit.Id)
		}
		parent = id
	}
	return parent, nil
}

func childOU(ctx context.Context, org *organizations.Client, parent, name string) (string, error) {
	pages := organizations.NewListOrganizationalUnitsForParentPaginator(org, &organizations.ListOrganizationalUnitsForParentInput{ParentId: aws.String(parent)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return "", fmt.Errorf("listing the OUs under %s: %w", parent, err)
		}
		for _, ou := range page.OrganizationalUnits {
			if aws.ToString(ou.Name) == name {
				return aws.ToString(ou.Id), nil
			}
		}
	}
	return "", nil
}
