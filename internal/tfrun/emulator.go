package tfrun

import (
	"fmt"
	"net"
	"net/url"
	"path"
	"strings"
)

// EmulatorEndpoint is endpoint (AWS_ENDPOINT_URL) when it names a loopback
// host, "" otherwise: an AWS emulator (moto) listens only there, and only
// there do Terraform's workspaces get the emulator's overrides
// (Runner.Emulator). A real endpoint override (a VPC endpoint, a FIPS
// endpoint) is not an emulator: Terraform keeps every check against it.
func EmulatorEndpoint(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return ""
	}
	if h := u.Hostname(); h == "localhost" || (net.ParseIP(h) != nil && net.ParseIP(h).IsLoopback()) {
		return endpoint
	}
	return ""
}

// emulatorServices are the services the roots call, each pointed at the
// emulator.
var emulatorServices = []string{"acm", "apigatewayv2", "ec2", "ecr", "eks", "elbv2", "iam", "iot", "kms", "logs", "organizations", "rds", "route53", "s3", "secretsmanager", "ssm", "sts"}

// emulatorOverrides are the Terraform override files written into a
// workspace when it runs against an AWS emulator (moto), by path inside
// the workspace. They are the one place where an emulator run differs
// from a real one:
//
//   - each aws provider configuration (the root's aliases too) talks to
//     the emulator, skips the checks an emulator cannot answer, and retries
//     a failing call once, not for minutes; it still asks the emulator
//     who it is, so that allowed_account_ids is enforced;
//   - eks's aws_eks_addon resources (the EBS CSI driver, EKS Pod
//     Identity's agent) are not created: moto has no EKS add-on API at
//     all (the associations themselves are made: the IAM gate answers
//     that API, awsemu/podidentity.go);
//   - nor eks's access entry and access policy association (the bootstrap
//     role's way into the private API): moto has no EKS access entry API.
func emulatorOverrides(root, endpoint string, aliases []string) map[string]string {
	var eps []string
	for _, s := range emulatorServices {
		eps = append(eps, fmt.Sprintf("    %-13s = %q", s, endpoint))
	}
	const header = "# Written by regionctl for a run against the AWS emulator at %s; never present in a real run.\n"
	provider := func(alias string) string {
		if alias != "" {
			alias = fmt.Sprintf("  alias                       = %q\n", alias)
		}
		return fmt.Sprintf(`provider "aws" {
%s  skip_credentials_validation = true
  skip_metadata_api_check     = true
  skip_region_validation      = true
  s3_use_path_style           = true
  max_retries                 = 1
  endpoints {
%s
  }
}
`, alias, strings.Join(eps, "\n"))
	}
	providers := provider("")
	for _, a := range aliases {
		providers += "\n" + provider(a)
	}
	return map[string]string{
		path.Join(root, "regionctl_emulator_override.tf"): fmt.Sprintf(header, endpoint) + providers,
		"modules/eks/regionctl_emulator_override.tf": fmt.Sprintf(header+`# moto implements no EKS add-on API (CreateAddon, DescribeAddon) and no
# access entry API (CreateAccessEntry, AssociateAccessPolicy): the EBS CSI
# add-on, EKS Pod Identity's agent and the bootstrap's access entry are left
# out of emulator runs; terraform validate and the plan-only check cover them.
resource "aws_eks_addon" "ebs_csi" {
  count = 0
}

resource "aws_eks_addon" "pod_identity_agent" {
  count = 0
}

resource "aws_eks_access_entry" "bootstrap" {
  count = 0
}

resource "aws_eks_access_policy_association" "bootstrap" {
  count = 0
}
`, endpoint),
	}
}
