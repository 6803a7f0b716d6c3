# The trust policy of a role held by ServiceAccounts of an EKS cluster
# (IRSA): web identities of the cluster's OIDC provider, for the given
# subjects and the STS audience only.

data "aws_iam_policy_document" "this" {
  statement {
    actions = ["sts:AssumeRoleWithWebIdentity"]
    principals {
      type        = "Federated"
      identifiers = [var.oidc_provider_arn]
    }
    condition {
      test     = "StringEquals"
      variable = "${trimprefix(var.oidc_issuer, "https://")}:sub"
      values   = [for sa in var.service_accounts : "system:serviceaccount:${sa}"]
    }
    condition {
      test     = "StringEquals"
      variable = "${trimprefix(var.oidc_issuer, "https://")}:aud"
      values   = ["sts.amazonaws.com"]
    }
  }
}
