# Bootstraps the regional pipeline of one region (DESIGN.md §5), run by the
# central pipeline. In the regional account (reached through the role the
# account step provides): the regional pipeline's role, trusted only by the
# regional cluster's Tekton ServiceAccount through IRSA, with its
# region-scoped policy; the bucket of the region's management cluster state,
# whose policy admits only that role; and the handoff parameter that tells
# the regional pipeline where the central pipeline put things. In the
# management account: the region's minting role, trusted only by that
# pipeline role with the region's ExternalId, and the policy of the central
# state bucket that lets that role read (never write) its region's state.
# In the region's DR account: the bucket of its management clusters' etcd
# snapshots. In the management account: the bucket of the region's
# clusters' health reports.
#
# In the management account too: the StackSet through which AWS
# CloudFormation deploys ManagementClusterDeployRole and its boundary into
# every account that lands in the region's management cluster OU (no
# regional principal ever makes it or reaches an administrator role
# there), and the organisation's guardrails on the region's OUs: a service
# control policy and a resource control policy.
#
# Every IAM document is read from iam/ beside this file: the region's
# deploy/<env>/<region>/iam/, which the pipeline stages there (so the file
# a reviewer reads is the document applied, and a saved plan names no path
# of the machine that made it), with ${...} placeholders for the ids only
# AWS knows; templatestring fills them.

data "aws_caller_identity" "regional" {}

data "aws_caller_identity" "management" {
  provider = aws.management
}

locals {
  # The region's rendered IAM documents by name; {} for one not staged
  # (the approvers', without gitops.approvers), and the plan fails when a
  # required one is missing (the handoff parameter's precondition).
  iam_files = fileset("${path.module}/iam", "*.json")
  required_documents = [
    "regional-pipeline-trust", "regional-pipeline-policy", "minting-role-trust", "minting-role-policy",
    "management-cluster-deploy-role-trust", "management-cluster-deploy-role-policy", "management-cluster-boundary",
    "scp-guardrails", "rcp-data-perimeter", "management-cluster-state-bucket-policy", "central-state-bucket-policy",
    "etcd-backup-bucket-policy", "health-bucket-policy",
  ]
  iam = {
    for n in concat(local.required_documents, ["approver-trust", "approver-policy", "central-approver-policy"]) :
    n => contains(local.iam_files, "${n}.json") ? file("${path.module}/iam/${n}.json") : "{}"
  }
  ids = {
    pipeline_account_id   = data.aws_caller_identity.regional.account_id
    management_account_id = data.aws_caller_identity.management.account_id
    organization_id       = var.organization_id
    root_id               = var.root_id
    management_ou_id      = var.management_ou_id
    oidc_provider         = trimprefix(var.regional_oidc_issuer, "https://")
    dr_account_id         = var.dr_account_id
    platform_api_id       = var.platform_api_id
  }
  # The region's OUs the guardrails bind: its management clusters' and its
  # regional account's.
  guarded_ous = compact([var.management_ou_id, var.regional_ou_id])
}

# In the region's DR account (through its AccessRole, as the central
# pipeline): the bucket of the management clusters' etcd snapshots.
module "etcd_backup" {
  source         = "../modules/contributed-bucket"
  name           = var.etcd_backup_bucket
  retention_days = var.etcd_backup_retention_days
  policy_json    = templatestring(local.iam["etcd-backup-bucket-policy"], local.ids)
  tags           = { "regionctl:region" = var.region }
  providers = {
    aws = aws.dr
  }
}

# In the management account: the bucket of the region's clusters' health
# reports (each cluster's argocd-health-reporter puts its own under its
# account's prefix); rollout promote reads it there. A report is rewritten
# every few minutes; a week keeps what an investigation needs.
module "health_bucket" {
  source         = "../modules/contributed-bucket"
  name           = var.health_bucket
  retention_days = 7
  policy_json    = templatestring(local.iam["health-bucket-policy"], local.ids)
  tags           = { "regionctl:region" = var.region }
  providers = {
    aws = aws.management
  }
}

module "pipeline_role" {
  source            = "../modules/iam-role"
  name              = var.pipeline_role_name
  trust_policy_json = templatestring(local.iam["regional-pipeline-trust"], local.ids)
  policy_json       = templatestring(local.iam["regional-pipeline-policy"], local.ids)
  tags              = { "regionctl:region" = var.region }
}

module "state_bucket" {
  source = "../modules/state-bucket"
  name   = var.state_bucket
}

resource "aws_s3_bucket_policy" "state_bucket" {
  bucket = module.state_bucket.name
  policy = templatestring(local.iam["management-cluster-state-bucket-policy"], local.ids)
}

module "minting_role" {
  count             = var.mint_accounts ? 1 : 0
  source            = "../modules/iam-role"
  name              = var.minting_role_name
  trust_policy_json = templatestring(local.iam["minting-role-trust"], local.ids)
  policy_json       = templatestring(local.iam["minting-role-policy"], local.ids)
  tags              = { "regionctl:region" = var.region }
  providers = {
    aws = aws.management
  }
}

# The region's approver roles (gitops.approvers may assume them): in the
# regional account for the management clusters' states, in the management
# account for the regional cluster's. Only they may write an approval next
# to a state (the buckets' policies deny it to every other principal), and
# a run that needs one refuses without it.
module "approver_role" {
  count             = contains(local.iam_files, "approver-trust.json") ? 1 : 0
  source            = "../modules/iam-role"
  name              = var.approver_role_name
  trust_policy_json = templatestring(local.iam["approver-trust"], local.ids)
  policy_json       = templatestring(local.iam["approver-policy"], local.ids)
  tags              = { "regionctl:region" = var.region }
}

module "central_approver_role" {
  count             = contains(local.iam_files, "approver-trust.json") ? 1 : 0
  source            = "../modules/iam-role"
  name              = var.approver_role_name
  trust_policy_json = templatestring(local.iam["approver-trust"], local.ids)
  policy_json       = templatestring(local.iam["central-approver-policy"], local.ids)
  tags              = { "regionctl:region" = var.region }
  providers = {
    aws = aws.management
  }
}

resource "aws_s3_bucket_policy" "central_state" {
  provider = aws.management
  bucket   = var.central_state_bucket
  policy   = templatestring(local.iam["central-state-bucket-policy"], local.ids)
}

resource "aws_ssm_parameter" "handoff" {
  name        = var.handoff_parameter
  type        = "String"
  description = "What the central pipeline hands the regional pipeline of ${var.region}; written by terraform/central-bootstrap only."
  value = jsonencode({
    region                = var.region
    management_account_id = data.aws_caller_identity.management.account_id
    minting_role_arn      = try(module.minting_role[0].arn, "")
    organization_id       = var.organization_id
    management_ou_id      = var.management_ou_id
    central_state_bucket  = var.central_state_bucket
    platform_api_endpoint = var.platform_api_endpoint
  })
  lifecycle {
    # The documents every run needs, or the plan stops here, naming them.
    precondition {
      condition     = length(setsubtract([for n in local.required_documents : "${n}.json"], local.iam_files)) == 0
      error_message = "The region's IAM documents are not all in iam/ beside this root: regionctl's pipeline stages deploy/<env>/<region>/iam/ there (missing: ${join(", ", setsubtract([for n in local.required_documents : "${n}.json"], local.iam_files))})."
    }
  }
}

# The deploy role of every management cluster account of the region. AWS
# deploys the stack into each account moved into the OU, and removes it
# from an account moved out; the regional pipeline waits for it and
# assumes it with the region's ExternalId.
resource "aws_cloudformation_stack_set" "deploy_role" {
  count            = var.mint_accounts ? 1 : 0
  provider         = aws.management
  name             = var.deploy_role_stack_set_name
  description      = "ManagementClusterDeployRole and its boundary in each management cluster account of ${var.region} (regionctl)"
  permission_model = "SERVICE_MANAGED"
  capabilities     = ["CAPABILITY_NAMED_IAM"]
  auto_deployment {
    enabled                          = true
    retain_stacks_on_account_removal = false
  }
  template_body = jsonencode({
    AWSTemplateFormatVersion = "2010-09-09"
    Description              = "ManagementClusterDeployRole of a management cluster account of ${var.region}, deployed by regionctl's central pipeline"
    Resources = {
      Boundary = {
        Type = "AWS::IAM::ManagedPolicy"
        Properties = {
          ManagedPolicyName = "regionctl-management-cluster-boundary"
          PolicyDocument    = jsondecode(templatestring(local.iam["management-cluster-boundary"], local.ids))
        }
      }
      DeployRole = {
        Type = "AWS::IAM::Role"
        Properties = {
          RoleName                 = "ManagementClusterDeployRole"
          AssumeRolePolicyDocument = jsondecode(templatestring(local.iam["management-cluster-deploy-role-trust"], local.ids))
          Policies = [{
            PolicyName     = "ManagementClusterDeployRole"
            PolicyDocument = jsondecode(templatestring(local.iam["management-cluster-deploy-role-policy"], local.ids))
          }]
          Tags = [{ Key = "regionctl:region", Value = var.region }]
        }
      }
    }
  })
}

resource "aws_cloudformation_stack_set_instance" "deploy_role" {
  count          = var.mint_accounts ? 1 : 0
  provider       = aws.management
  stack_set_name = aws_cloudformation_stack_set.deploy_role[0].name
  region         = var.region
  deployment_targets {
    organizational_unit_ids = [var.management_ou_id]
  }
}

# The guardrails of the region's OUs. Installed minified: Organizations
# counts every character of a policy against its size limit.
resource "aws_organizations_policy" "guardrails" {
  provider    = aws.management
  name        = var.guardrail_policy_name
  description = "regionctl: no root user, no leaving, no other region, no change to the identity chain, no outside data (${var.region})"
  type        = "SERVICE_CONTROL_POLICY"
  content     = jsonencode(jsondecode(templatestring(local.iam["scp-guardrails"], local.ids)))
}

resource "aws_organizations_policy_attachment" "guardrails" {
  for_each  = toset(local.guarded_ous)
  provider  = aws.management
  policy_id = aws_organizations_policy.guardrails.id
  target_id = each.value
}

resource "aws_organizations_policy" "data_perimeter" {
  provider    = aws.management
  name        = var.data_perimeter_policy_name
  description = "regionctl: S3, STS, KMS and Secrets Manager of ${var.region}'s accounts answer the organisation only"
  type        = "RESOURCE_CONTROL_POLICY"
  content     = jsonencode(jsondecode(templatestring(local.iam["rcp-data-perimeter"], local.ids)))
}

resource "aws_organizations_policy_attachment" "data_perimeter" {
  for_each  = toset(local.guarded_ous)
  provider  = aws.management
  policy_id = aws_organizations_policy.data_perimeter.id
  target_id = each.value
}
