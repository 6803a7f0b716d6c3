# What HyperShift needs of a management cluster's account (seed 004): a
# bucket anyone may read the hosted clusters' OIDC documents from, the
# operator's credentials, the private zone of PrivateLink, and, when the
# cluster has a public zone, the roles external-dns and cert-manager write
# into it with; and the role that adds etcd snapshots to the region's DR
# account. Every role is held by a ServiceAccount of the management cluster
# (IRSA) and carries the account's permissions boundary.

data "aws_partition" "current" {}

data "aws_caller_identity" "current" {}

locals {
  partition = data.aws_partition.current.partition
  prefix    = "${var.region}-${var.cluster_name}"
  bucket    = "arn:${local.partition}:s3:::${var.oidc_bucket}"
  public    = var.public_zone != ""
  zone_arn  = local.public ? aws_route53_zone.public[0].arn : ""
}

# The OIDC documents of hosted control planes. AWS STS and every client of
# a hosted cluster fetch them anonymously, so the bucket's policy is public
# for reading objects (and for nothing else); ACLs stay blocked.
resource "aws_s3_bucket" "oidc" {
  bucket = var.oidc_bucket
  tags   = var.tags
}

resource "aws_s3_bucket_versioning" "oidc" {
  bucket = aws_s3_bucket.oidc.id
  versioning_configuration {
    status = "Enabled"
  }
}

resource "aws_s3_bucket_server_side_encryption_configuration" "oidc" {
  bucket = aws_s3_bucket.oidc.id
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm = "AES256"
    }
  }
}

resource "aws_s3_bucket_public_access_block" "oidc" {
  bucket                  = aws_s3_bucket.oidc.id
  block_public_acls       = true
  ignore_public_acls      = true
  block_public_policy     = false
  restrict_public_buckets = false
}

data "aws_iam_policy_document" "oidc_bucket" {
  statement {
    sid       = "PublicReadOfOIDCDocuments"
    actions   = ["s3:GetObject"]
    resources = ["${local.bucket}/*"]
    principals {
      type        = "*"
      identifiers = ["*"]
    }
  }
  statement {
    sid       = "TLSOnly"
    effect    = "Deny"
    actions   = ["s3:*"]
    resources = [local.bucket, "${local.bucket}/*"]
    principals {
      type        = "*"
      identifiers = ["*"]
    }
    condition {
      test     = "Bool"
      variable = "aws:SecureTransport"
      values   = ["false"]
    }
  }
}

resource "aws_s3_bucket_policy" "oidc" {
  bucket = aws_s3_bucket.oidc.id
  policy = data.aws_iam_policy_document.oidc_bucket.json
  # A public policy is refused while the bucket blocks public policies.
  depends_on = [aws_s3_bucket_public_access_block.oidc]
}

# The zone HyperShift's PrivateLink endpoints are named in, seen only from
# the management cluster's VPC.
resource "aws_route53_zone" "private_link" {
  count   = var.private_link ? 1 : 0
  name    = "${var.cluster_name}.${var.region}.hypershift.local"
  comment = "HyperShift PrivateLink endpoints of ${local.prefix}"
  vpc {
    vpc_id = var.vpc_id
  }
  tags = var.tags
}

# The public zone hosted clusters' API and ingress names go into.
resource "aws_route53_zone" "public" {
  count   = local.public ? 1 : 0
  name    = var.public_zone
  comment = "Hosted clusters of ${local.prefix}"
  tags    = var.tags
}

# The ServiceAccounts of the management cluster that hold a role, each through
# EKS Pod Identity (modules/pod-identity-trust): the trust names the
# ServiceAccount and the association binds it, so no rendered object needs
# the role's ARN.
locals {
  service_accounts = {
    hypershift   = "hypershift:operator"
    external-dns = "external-dns:external-dns" # the external-dns component's namespace
    cert-manager = "cert-manager:cert-manager"
    etcd-backup  = var.etcd_backup_service_account
  }
  # Each role this module makes, by the key of its ServiceAccount.
  roles = merge(
    { hypershift = aws_iam_role.operator.arn, etcd-backup = aws_iam_role.etcd_backup.arn },
    { for k, r in aws_iam_role.dns : k => r.arn },
  )
}

module "trust" {
  source          = "../pod-identity-trust"
  for_each        = local.service_accounts
  cluster_arn     = var.cluster_arn
  service_account = each.value
}

resource "aws_eks_pod_identity_association" "this" {
  for_each        = { for k, sa in local.service_accounts : k => sa if contains(["hypershift", "etcd-backup"], k) || contains(keys(local.dns_roles), k) }
  cluster_name    = var.cluster_name
  namespace       = split(":", each.value)[0]
  service_account = split(":", each.value)[1]
  role_arn        = local.roles[each.key]
  tags            = var.tags
}

# The HyperShift operator: writes the OIDC documents and, with PrivateLink,
# publishes each hosted control plane as an endpoint service.
data "aws_iam_policy_document" "operator" {
  statement {
    sid       = "OIDCDocuments"
    actions   = ["s3:PutObject", "s3:GetObject", "s3:DeleteObject"]
    resources = ["${local.bucket}/*"]
  }
  statement {
    sid       = "ListOIDCDocuments"
    actions   = ["s3:ListBucket"]
    resources = [local.bucket]
  }
  dynamic "statement" {
    for_each = var.private_link ? [1] : []
    content {
      sid = "PrivateLinkEndpointServices"
      actions = [
        "ec2:CreateVpcEndpointServiceConfiguration", "ec2:DescribeVpcEndpointServiceConfigurations",
        "ec2:DeleteVpcEndpointServiceConfigurations", "ec2:DescribeVpcEndpointServicePermissions",
        "ec2:ModifyVpcEndpointServicePermissions", "ec2:RejectVpcEndpointConnections",
        "ec2:DescribeVpcEndpointConnections", "ec2:CreateTags", "elasticloadbalancing:DescribeLoadBalancers",
      ]
      resources = ["*"]
    }
  }
  dynamic "statement" {
    for_each = var.private_link ? [1] : []
    content {
      sid       = "PrivateLinkRecords"
      actions   = ["route53:ChangeResourceRecordSets", "route53:ListResourceRecordSets"]
      resources = [aws_route53_zone.private_link[0].arn]
    }
  }
}

resource "aws_iam_role" "operator" {
  name                 = "${local.prefix}-hypershift"
  assume_role_policy   = module.trust["hypershift"].trust_json
  permissions_boundary = var.permissions_boundary
  tags                 = var.tags
}

resource "aws_iam_role_policy" "operator" {
  name   = "hypershift-operator"
  role   = aws_iam_role.operator.id
  policy = data.aws_iam_policy_document.operator.json
}

# The roles that write into the public zone: external-dns (the hosted
# clusters' records) and cert-manager (DNS-01 challenges), each held by its
# ServiceAccount and allowed record changes in that zone alone.
locals {
  dns_roles = local.public ? {
    external-dns = ["route53:ListHostedZones", "route53:ListTagsForResource"]
    cert-manager = ["route53:ListHostedZonesByName", "route53:GetChange"]
  } : {}
}

data "aws_iam_policy_document" "dns" {
  for_each = local.dns_roles
  statement {
    sid       = "RecordsOfThePublicZone"
    actions   = ["route53:ChangeResourceRecordSets", "route53:ListResourceRecordSets"]
    resources = [local.zone_arn]
  }
  statement {
    sid       = "FindTheZone"
    actions   = each.value
    resources = ["*"]
  }
}

resource "aws_iam_role" "dns" {
  for_each             = local.dns_roles
  name                 = "${local.prefix}-${each.key}"
  assume_role_policy   = module.trust[each.key].trust_json
  permissions_boundary = var.permissions_boundary
  tags                 = var.tags
}

resource "aws_iam_role_policy" "dns" {
  for_each = local.dns_roles
  name     = each.key
  role     = aws_iam_role.dns[each.key].id
  policy   = data.aws_iam_policy_document.dns[each.key].json
}

# The etcd snapshots of the cluster's hosted control planes go to the
# region's DR account: this role may add objects under its own account's
# prefix of that bucket, which is all the bucket's policy admits
# (deploy/<env>/<region>/iam/etcd-backup-bucket-policy.json). It can
# neither read nor delete them.
resource "aws_iam_role" "etcd_backup" {
  name                 = "${local.prefix}-etcd-backup"
  assume_role_policy   = module.trust["etcd-backup"].trust_json
  permissions_boundary = var.permissions_boundary
  tags                 = var.tags
}

resource "aws_iam_role_policy" "etcd_backup" {
  name = "etcd-backup"
  role = aws_iam_role.etcd_backup.id
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid      = "AddSnapshotsUnderItsAccount"
      Effect   = "Allow"
      Action   = ["s3:PutObject"]
      Resource = ["arn:${local.partition}:s3:::${var.etcd_backup_bucket}/${data.aws_caller_identity.current.account_id}/*"]
    }]
  })
}
