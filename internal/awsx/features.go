package awsx

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cftypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/aws-sdk-go-v2/service/organizations"
	orgtypes "github.com/aws/aws-sdk-go-v2/service/organizations/types"

	"github.com/regionctl/regionctl/internal/pipeline"
)

// trustedServices are the services the guardrails need trusted access for:
// AWS CloudFormation StackSets deploys the deploy roles into the regions'
// OUs, and IAM manages member accounts' root access centrally.
var trustedServices = []string{"member.org.stacksets.cloudformation.amazonaws.com", "iam.amazonaws.com"}

// EnsureGuardrailFeatures turns on, for the whole organisation and only
// where they are off: SCPs and RCPs on the root, trusted access of
// CloudFormation StackSets and IAM, StackSets' organisation access, and
// IAM's centralized root credentials management, under which AWS makes
// new member accounts without root user credentials.
func (c *Client) EnsureGuardrailFeatures(ctx context.Context, creds pipeline.Credentials) (string, error) {
	org := c.orgs(creds)
	var done []string
	roots, err := org.ListRoots(ctx, &organizations.ListRootsInput{})
	if err != nil {
		return "", fmt.Errorf("listing the organisation's roots: %w", denied(err))
	}
	if len(roots.Roots) == 0 {
		return "", errors.New("the organisation has no root")
	}
	root := roots.Roots[0]
	for _, t := range []orgtypes.PolicyType{orgtypes.PolicyTypeServiceControlPolicy, orgtypes.PolicyTypeResourceControlPolicy} {
		if slices.ContainsFunc(root.PolicyTypes, func(p orgtypes.PolicyTypeSummary) bool {
			return p.Type == t && p.Status == orgtypes.PolicyTypeStatusEnabled
		}) {
			continue
		}
		_, err := org.EnablePolicyType(ctx, &organizations.EnablePolicyTypeInput{RootId: root.Id, PolicyType: t})
		if err != nil && code(err) != "PolicyTypeAlreadyEnabledException" {
			return "", fmt.Errorf("enabling %s on the root: %w", t, denied(err))
		}
		if err == nil {
			done = append(done, string(t))
		}
	}
	access, err := org.ListAWSServiceAccessForOrganization(ctx, &organizations.ListAWSServiceAccessForOrganizationInput{})
	if err != nil {
		return "", fmt.Errorf("listing the organisation's trusted services: %w", denied(err))
	}
	for _, svc := range trustedServices {
		if slices.ContainsFunc(access.EnabledServicePrincipals, func(p orgtypes.EnabledServicePrincipal) bool { return aws.ToString(p.ServicePrincipal) == svc }) {
			continue
		}
		if _, err := org.EnableAWSServiceAccess(ctx, &organizations.EnableAWSServiceAccessInput{ServicePrincipal: aws.String(svc)}); err != nil {
			return "", fmt.Errorf("trusting %s: %w", svc, denied(err))
		}
		done = append(done, "trusted access of "+svc)
	}
	cf := cloudformation.NewFromConfig(c.Config(creds, ""))
	st, err := cf.DescribeOrganizationsAccess(ctx, &cloudformation.DescribeOrganizationsAccessInput{})
	if err != nil {
		return "", fmt.Errorf("reading CloudFormation StackSets' organisation access: %w", denied(err))
	}
	if st.Status != cftypes.OrganizationStatusEnabled {
		if _, err := cf.ActivateOrganizationsAccess(ctx, &cloudformation.ActivateOrganizationsAccessInput{}); err != nil {
			return "", fmt.Errorf("activating CloudFormation StackSets' organisation access: %w", denied(err))
		}
		done = append(done, "StackSets' organisation access")
	}
	client := iam.NewFromConfig(c.Config(creds, ""))
	features, err := client.ListOrganizationsFeatures(ctx, &iam.ListOrganizationsFeaturesInput{})
	if err != nil {
		return "", fmt.Errorf("reading the organisation's root access features: %w", denied(err))
	}
	if !slices.Contains(features.EnabledFeatures, iamtypes.FeatureTypeRootCredentialsManagement) {
		if _, err := client.EnableOrganizationsRootCredentialsManagement(ctx, &iam.EnableOrganizationsRootCredentialsManagementInput{}); err != nil {
			return "", fmt.Errorf("turning on centralized root access: %w", denied(err))
		}
		done = append(done, "centralized root access (new accounts without root user credentials)")
	}
	if len(done) == 0 {
		return "the organisation's guardrail features were on", nil
	}
	return "turned on " + strings.Join(done, ", "), nil
}
