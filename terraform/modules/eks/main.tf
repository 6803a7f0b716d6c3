# An EKS cluster with one managed node group and the IAM roles it needs. IAM
# names carry the region so that a region-scoped pipeline can manage them.

locals {
  prefix = "${var.region}-${var.name}"
}

data "aws_partition" "current" {}

data "aws_iam_policy_document" "cluster_trust" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["eks.amazonaws.com"]
    }
  }
}

data "aws_iam_policy_document" "node_trust" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["ec2.amazonaws.com"]
    }
  }
}

module "cluster_role" {
  source               = "../iam-role"
  name                 = "${local.prefix}-cluster"
  trust_policy_json    = data.aws_iam_policy_document.cluster_trust.json
  managed_policy_arns  = ["arn:${data.aws_partition.current.partition}:iam::aws:policy/AmazonEKSClusterPolicy"]
  permissions_boundary = var.permissions_boundary
  tags                 = var.tags
}

module "node_role" {
  source            = "../iam-role"
  name              = "${local.prefix}-node"
  trust_policy_json = data.aws_iam_policy_document.node_trust.json
  managed_policy_arns = [
    "arn:${data.aws_partition.current.partition}:iam::aws:policy/AmazonEKSWorkerNodePolicy",
    "arn:${data.aws_partition.current.partition}:iam::aws:policy/AmazonEKS_CNI_Policy",
    "arn:${data.aws_partition.current.partition}:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly",
  ]
  permissions_boundary = var.permissions_boundary
  tags                 = var.tags
}

# Kubernetes Secrets are encrypted in etcd with a key of the cluster's own.
resource "aws_kms_key" "secrets" {
  description             = "Kubernetes Secrets of EKS cluster ${local.prefix}"
  enable_key_rotation     = true
  deletion_window_in_days = 30
  tags                    = var.tags
}

resource "aws_kms_alias" "secrets" {
  name          = "alias/${local.prefix}-eks-secrets"
  target_key_id = aws_kms_key.secrets.key_id
}

# The control plane's logs, in the group EKS writes to, kept for a bounded
# time; created first so that EKS does not create it without retention.
resource "aws_cloudwatch_log_group" "cluster" {
  name              = "/aws/eks/${var.name}/cluster"
  retention_in_days = var.log_retention_days
  tags              = var.tags
}

resource "aws_eks_cluster" "this" {
  name                      = var.name
  version                   = var.kubernetes_version
  role_arn                  = module.cluster_role.arn
  enabled_cluster_log_types = ["api", "audit", "authenticator", "controllerManager", "scheduler"]
  vpc_config {
    subnet_ids              = var.subnet_ids
    endpoint_private_access = true
    endpoint_public_access  = var.endpoint_public_access
    security_group_ids      = [aws_security_group.api.id]
  }
  # Who may use the cluster's private API is said by access entries alone
  # (no aws-auth ConfigMap), and nobody is admin by default, not even the
  # role that created the cluster: see access.tf.
  access_config {
    authentication_mode                         = "API"
    bootstrap_cluster_creator_admin_permissions = false
  }
  encryption_config {
    resources = ["secrets"]
    provider {
      key_arn = aws_kms_key.secrets.arn
    }
  }
  tags       = var.tags
  depends_on = [aws_cloudwatch_log_group.cluster]
}

resource "aws_eks_node_group" "default" {
  cluster_name    = aws_eks_cluster.this.name
  node_group_name = "default"
  node_role_arn   = module.node_role.arn
  subnet_ids      = var.subnet_ids
  instance_types  = [var.node_instance_type]
  scaling_config {
    min_size     = var.node_min
    max_size     = var.node_max
    desired_size = var.node_min
  }
  tags = var.tags
}

# The cluster's OIDC issuer as an IAM identity provider, so that its
# ServiceAccounts can hold IAM roles (IRSA): the regional pipeline's Tekton
# ServiceAccount among them.
resource "aws_iam_openid_connect_provider" "this" {
  url            = aws_eks_cluster.this.identity[0].oidc[0].issuer
  client_id_list = ["sts.amazonaws.com"]
  tags           = var.tags
}

# The EBS CSI driver, which provisions the volumes of hosted control planes'
# etcd, with a role its controller's ServiceAccount holds.
module "ebs_csi_trust" {
  source            = "../irsa-trust"
  oidc_provider_arn = aws_iam_openid_connect_provider.this.arn
  oidc_issuer       = aws_eks_cluster.this.identity[0].oidc[0].issuer
  service_accounts  = ["kube-system:ebs-csi-controller-sa"]
}

module "ebs_csi_role" {
  source               = "../iam-role"
  name                 = "${local.prefix}-ebs-csi"
  trust_policy_json    = module.ebs_csi_trust.json
  managed_policy_arns  = ["arn:${data.aws_partition.current.partition}:iam::aws:policy/service-role/AmazonEBSCSIDriverPolicy"]
  permissions_boundary = var.permissions_boundary
  tags                 = var.tags
}

# EKS Pod Identity's agent, which gives a pod the role its ServiceAccount's
# association names (modules/pod-identity): the platform's workloads hold
# their roles that way, since the rendered objects cannot name an account
# minted at run time.
resource "aws_eks_addon" "pod_identity_agent" {
  cluster_name = aws_eks_cluster.this.name
  addon_name   = "eks-pod-identity-agent"
  tags         = var.tags
  depends_on   = [aws_eks_node_group.default]
}

resource "aws_eks_addon" "ebs_csi" {
  cluster_name             = aws_eks_cluster.this.name
  addon_name               = "aws-ebs-csi-driver"
  service_account_role_arn = module.ebs_csi_role.arn
  tags                     = var.tags
  depends_on               = [aws_eks_node_group.default]
}
