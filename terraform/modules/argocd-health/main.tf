# The cluster's Argo CD health reporter (the argocd-health-reporter
# component, ServiceAccount argocd/argocd-health-reporter: a CronJob running
# `regionctl argocd report`) puts its Applications' health into its region's
# health bucket in the management account, because nothing outside may call
# into a private cluster. It holds, through EKS Pod Identity, a role that may
# put exactly one object, its own account's report, and nothing else; the
# bucket's policy admits the same and no more.

data "aws_caller_identity" "current" {}

data "aws_partition" "current" {}

locals {
  prefix = "${var.region}-${var.cluster_name}"
}

module "reporter" {
  source          = "../pod-identity-role"
  name            = "${local.prefix}-health"
  cluster_name    = var.cluster_name
  cluster_arn     = var.cluster_arn
  service_account = "argocd:argocd-health-reporter"
  policy_json = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid      = "ItsOwnReport"
      Effect   = "Allow"
      Action   = ["s3:PutObject"]
      Resource = ["arn:${data.aws_partition.current.partition}:s3:::${var.health_bucket}/${data.aws_caller_identity.current.account_id}/health.json"]
    }]
  })
  permissions_boundary = var.permissions_boundary
  tags                 = var.tags
}
