# A role held by one ServiceAccount of an EKS cluster through EKS Pod
# Identity, and the association that binds that ServiceAccount to it: the
# trust (pod-identity-trust) admits that ServiceAccount of that cluster only,
# and the association is made here, where the account is known, so nothing in
# the cluster names the role.

module "trust" {
  source          = "../pod-identity-trust"
  cluster_arn     = var.cluster_arn
  service_account = var.service_account
}

module "role" {
  source               = "../iam-role"
  name                 = var.name
  trust_policy_json    = module.trust.trust_json
  policy_json          = var.policy_json
  permissions_boundary = var.permissions_boundary
  tags                 = var.tags
}

resource "aws_eks_pod_identity_association" "this" {
  cluster_name    = var.cluster_name
  namespace       = split(":", var.service_account)[0]
  service_account = split(":", var.service_account)[1]
  role_arn        = module.role.arn
  tags            = var.tags
}
