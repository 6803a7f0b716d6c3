package awsemu

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/regionctl/regionctl/internal/iamjudge"
)

// ServiceSession is what an AWS service does when it runs something as a
// role (ECS starting a task with its task role): it assumes the role as
// its service principal, with the context keys the service sets
// (aws:SourceAccount, aws:SourceArn). The gate decides it by the role's
// trust policy alone, as STS does, writes the decision to the ledger, and
// on allow returns the session's credentials, which the gate then
// attributes to the role like any session it relayed.
func (g *Gate) ServiceSession(ctx context.Context, roleARN, service string, keys map[string][]string) (aws.Credentials, error) {
	role, err := g.view.role(ctx, roleARN)
	if err != nil {
		return aws.Credentials{}, err
	}
	entry := Entry{Principal: service, Operation: "sts:AssumeRole", Action: "sts:AssumeRole", Resource: roleARN}
	if role == nil {
		entry.Decision, entry.Reason = "deny", "no role "+roleARN+" exists"
		g.ledger.add(entry)
		return aws.Credentials{}, fmt.Errorf("AccessDenied: %s", entry.Reason)
	}
	account := accountOf(roleARN)
	c := map[string][]string{"aws:ResourceAccount": {account}}
	for k, v := range keys {
		c[k] = v
	}
	v := iamjudge.Authorize(iamjudge.Authorization{Request: iamjudge.Request{Caller: iamjudge.Caller{Service: service, Account: account}, Action: "sts:AssumeRole", Resource: roleARN, Context: c},
		ResourcePolicy: role.Trust, ResourceAccount: account, TrustRequired: true})
	entry.Reason = v.Reason
	if v.Decision != iamjudge.Allow {
		entry.Decision = "deny"
		g.ledger.add(entry)
		return aws.Credentials{}, fmt.Errorf("AccessDenied: %s may not assume %s: %s", service, roleARN, v.Reason)
	}
	entry.Decision = "allow"
	g.ledger.add(entry)
	cfg, err := g.view.admin(ctx, account)
	if err != nil {
		return aws.Credentials{}, err
	}
	out, err := sts.NewFromConfig(cfg).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(roleARN), RoleSessionName: aws.String(service)})
	if err != nil {
		return aws.Credentials{}, err
	}
	cr := out.Credentials
	g.keys.add(&principal{AccessKey: aws.ToString(cr.AccessKeyId), Secret: aws.ToString(cr.SecretAccessKey), Account: account,
		ARN: aws.ToString(out.AssumedRoleUser.Arn), RoleARN: roleARN})
	return aws.Credentials{AccessKeyID: aws.ToString(cr.AccessKeyId), SecretAccessKey: aws.ToString(cr.SecretAccessKey), SessionToken: aws.ToString(cr.SessionToken)}, nil
}

// SignIn is a person signing in to role through the organisation's single
// sign-on (AssumeRoleWithSAML behind an identity provider the emulator does
// not run): the session's credentials, attributed by the gate to the role.
// The sign-in is written to the ledger; every request made with the
// session is judged as any other.
func (g *Gate) SignIn(ctx context.Context, roleARN, who string) (aws.Credentials, error) {
	account := accountOf(roleARN)
	entry := Entry{Principal: who + " (single sign-on)", Operation: "sts:AssumeRoleWithSAML", Action: "sts:AssumeRoleWithSAML", Resource: roleARN,
		Decision: "allow", Reason: "a person signed in through the organisation's identity provider"}
	role, err := g.view.role(ctx, roleARN)
	if err != nil {
		return aws.Credentials{}, err
	}
	if role == nil {
		entry.Decision, entry.Reason = "deny", "no role "+roleARN+" exists"
		g.ledger.add(entry)
		return aws.Credentials{}, fmt.Errorf("AccessDenied: %s", entry.Reason)
	}
	g.ledger.add(entry)
	cfg, err := g.view.admin(ctx, account)
	if err != nil {
		return aws.Credentials{}, err
	}
	out, err := sts.NewFromConfig(cfg).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(roleARN), RoleSessionName: aws.String(who)})
	if err != nil {
		return aws.Credentials{}, err
	}
	cr := out.Credentials
	g.keys.add(&principal{AccessKey: aws.ToString(cr.AccessKeyId), Secret: aws.ToString(cr.SecretAccessKey), Account: account,
		ARN: aws.ToString(out.AssumedRoleUser.Arn), RoleARN: roleARN})
	return aws.Credentials{AccessKeyID: aws.ToString(cr.AccessKeyId), SecretAccessKey: aws.ToString(cr.SecretAccessKey), SessionToken: aws.ToString(cr.SessionToken)}, nil
}
