# Bootstraps the regional pipeline of one region in the region's account: its
# role with the rendered region-scoped policy, its state bucket, and the
# ManagementClusterDeployRole template it assumes with the region's ExternalId.

data "aws_caller_identity" "current" {}

data "aws_iam_policy_document" "pipeline_trust" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "AWS"
      identifiers = ["arn:aws:iam::${data.aws_caller_identity.current.account_id}:root"]
    }
  }
}

module "pipeline_role" {
  source            = "../modules/iam-role"
  name              = var.pipeline_role_name
  trust_policy_json = data.aws_iam_policy_document.pipeline_trust.json
  policy_json       = var.pipeline_policy_json
  tags              = { "regionctl:region" = var.region }
}

module "state_bucket" {
  source = "../modules/state-bucket"
  name   = var.state_bucket
}

module "deploy_role" {
  source              = "../modules/iam-role"
  name                = "ManagementClusterDeployRole"
  trust_policy_json   = replace(var.deploy_role_trust_json, "$${pipeline_account_id}", data.aws_caller_identity.current.account_id)
  managed_policy_arns = ["arn:aws:iam::aws:policy/AdministratorAccess"]
  tags                = { "regionctl:region" = var.region }
}
