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
// it sits in spec.OU (creating the OU path). A CreateAccount request still
// in progress from an earlier run is resumed rather than repeated, so a
// re-run never makes a second account of the same name.
func (c *Client) EnsureAccount(ctx context.Context, spec pipeline.AccountSpec) (pipeline.Account, error) {
	org := c.orgs()
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
				return acc, fmt.Errorf("creating the account %s (not retried; a re-run finds it by name if AWS made it): %w", spec.Name, err)
			}
			requestID = aws.ToString(out.CreateAccountStatus.Id)
		}
		if id, err = c.waitCreated(ctx, org, spec.Name, requestID); err != nil {
			return acc, err
		}
		acc.Created = true
	}
	acc.ID = id
	if err := checkRegionTag(ctx, org, id, spec); err != nil {
		return acc, err
	}
	if spec.OU == "" {
		return acc, nil
	}
	ou, err := ensureOUPath(ctx, org, spec.OU)
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
		if _, err := org.MoveAccount(ctx, &organizations.MoveAccountInput{AccountId: aws.String(id), SourceParentId: aws.String(from), DestinationParentId: aws.String(ou)}); err != nil {
			return acc, fmt.Errorf("moving %s to %s: %w", id, spec.OU, err)
		}
		acc.Moved = true
	}
	return acc, nil
}

// checkRegionTag refuses an account found by name that belongs to
// another region (its regionctl:region tag), so that a pipeline never
// touches another region's account.
func checkRegionTag(ctx context.Context, org *organizations.Client, id string, spec pipeline.AccountSpec) error {
	want := spec.Tags["regionctl:region"]
	if want == "" {
		return nil
	}
	out, err := org.ListTagsForResource(ctx, &organizations.ListTagsForResourceInput{ResourceId: aws.String(id)})
	if err != nil {
		return fmt.Errorf("reading the tags of %s: %w", id, err)
	}
	for _, t := range out.Tags {
		if aws.ToString(t.Key) == "regionctl:region" && aws.ToString(t.Value) != want {
			return fmt.Errorf("refusing the account %s (%s): it is tagged regionctl:region=%s, not %s", spec.Name, id, aws.ToString(t.Value), want)
		}
	}
	return nil
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

// ensureOUPath finds or creates each OU of path (such as /platform/staging)
// below the organisation's root and returns the last one's id.
func ensureOUPath(ctx context.Context, org *organizations.Client, path string) (string, error) {
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
