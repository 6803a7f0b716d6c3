package awsemu

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/organizations"
	orgtypes "github.com/aws/aws-sdk-go-v2/service/organizations/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

// OUPath is the OU path of an account, such as /platform/staging ("/"
// when it sits in the root).
func OUPath(ctx context.Context, org *organizations.Client, account string) (string, error) {
	var names []string
	child := account
	for {
		parents, err := org.ListParents(ctx, &organizations.ListParentsInput{ChildId: aws.String(child)})
		if err != nil {
			return "", err
		}
		if len(parents.Parents) == 0 || parents.Parents[0].Type == orgtypes.ParentTypeRoot {
			return "/" + strings.Join(names, "/"), nil
		}
		ou, err := org.DescribeOrganizationalUnit(ctx, &organizations.DescribeOrganizationalUnitInput{OrganizationalUnitId: parents.Parents[0].Id})
		if err != nil {
			return "", err
		}
		names = append([]string{aws.ToString(ou.OrganizationalUnit.Name)}, names...)
		child = aws.ToString(parents.Parents[0].Id)
	}
}

// InAccount returns cfg acting in account through the role AWS
// Organizations made there, to look at what a run created.
func InAccount(ctx context.Context, cfg aws.Config, account string) (aws.Config, error) {
	out, err := sts.NewFromConfig(cfg).AssumeRole(ctx, &sts.AssumeRoleInput{
		RoleArn: aws.String("arn:aws:iam::" + account + ":role/OrganizationAccountAccessRole"), RoleSessionName: aws.String("regionctl-inspect")})
	if err != nil {
		return cfg, err
	}
	c := cfg.Copy()
	c.Credentials = credentials.NewStaticCredentialsProvider(aws.ToString(out.Credentials.AccessKeyId), aws.ToString(out.Credentials.SecretAccessKey), aws.ToString(out.Credentials.SessionToken))
	return c, nil
}
