# External Secrets Operator's controller (the external-secrets component,
# ServiceAccount external-secrets/external-secrets) brings the values the
# roots keep in Secrets Manager into the cluster as Kubernetes Secrets (the
# secrets-sync chart says which, where). It holds, through EKS Pod Identity,
# a role that may read exactly the secrets given here and nothing else: the
# controller's own credentials, as the operator uses them when a store names
# no other (external-secrets.io, "AWS Access": controller's pod identity),
# with the reads its AWS provider makes ("Secrets Manager": IAM policy).

locals {
  prefix = "${var.region}-${var.cluster_name}"
}

# The suffix is short: every role's name must fit IAM's 64 characters with
# the longest region and cluster names validate admits.
module "controller" {
  source          = "../pod-identity-role"
  name            = "${local.prefix}-ext-secrets"
  cluster_name    = var.cluster_name
  cluster_arn     = var.cluster_arn
  service_account = "external-secrets:external-secrets"
  policy_json = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid      = "TheSecretsItSyncs"
      Effect   = "Allow"
      Action   = ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret", "secretsmanager:GetResourcePolicy", "secretsmanager:ListSecretVersionIds"]
      Resource = var.secret_arns
    }]
  })
  permissions_boundary = var.permissions_boundary
  tags                 = var.tags
}

# The role and its association were made here before pod-identity-role made
# both.
moved {
  from = module.role
  to   = module.controller.module.role
}

moved {
  from = aws_eks_pod_identity_association.controller
  to   = module.controller.aws_eks_pod_identity_association.this
}
