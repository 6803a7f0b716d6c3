# The trust policy of a role held by one ServiceAccount of an EKS cluster
# through EKS Pod Identity. The caller makes the role and the
# aws_eks_pod_identity_association that binds the same ServiceAccount to it:
# nothing in the cluster carries the role's ARN (it needs the account id,
# minted at run time, so no rendered object can hold it); the association,
# made where the account is known, is the binding.
#
# The trust admits EKS Pod Identity's service principal only for the session
# tags it sets from the association (Amazon EKS User Guide, "Create IAM role
# with trust policy required by EKS Pod Identity" and "Grant Pods access to
# AWS resources based on tags": eks-cluster-arn, kubernetes-namespace,
# kubernetes-service-account), so another association in the account cannot
# lend this role to another ServiceAccount or cluster.

locals {
  namespace = split(":", var.service_account)[0]
  name      = split(":", var.service_account)[1]
}

data "aws_iam_policy_document" "trust" {
  statement {
    sid     = "EKSPodIdentityOfOneServiceAccount"
    actions = ["sts:AssumeRole", "sts:TagSession"]
    principals {
      type        = "Service"
      identifiers = ["pods.eks.amazonaws.com"]
    }
    condition {
      test     = "StringEquals"
      variable = "aws:RequestTag/eks-cluster-arn"
      values   = [var.cluster_arn]
    }
    condition {
      test     = "StringEquals"
      variable = "aws:RequestTag/kubernetes-namespace"
      values   = [local.namespace]
    }
    condition {
      test     = "StringEquals"
      variable = "aws:RequestTag/kubernetes-service-account"
      values   = [local.name]
    }
  }
}
