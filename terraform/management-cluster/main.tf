# A management cluster: hosts HyperShift control planes, with what HyperShift
# needs of its account (modules/hypershift), and its Maestro agent's way to
# the region's broker (modules/maestro-agent).

data "aws_partition" "current" {}

module "cluster" {
  source                 = "../modules/cluster"
  name                   = var.cluster_name
  region                 = var.region
  vpc_cidr               = var.vpc_cidr
  private_subnets        = var.private_subnets
  public_subnets         = var.public_subnets
  availability_zones     = var.availability_zones
  nat_gateways           = var.nat_gateways
  eks_version            = var.eks_version
  node_instance_type     = var.node_instance_type
  node_min               = var.node_min
  node_max               = var.node_max
  endpoint_public_access = var.endpoint_public_access
  runner_image           = var.runner_image
  gitops_repo_url        = var.gitops_repo_url
  permissions_boundary   = "arn:${data.aws_partition.current.partition}:iam::${var.account_id}:policy/${var.permissions_boundary}"
}

module "hypershift" {
  source               = "../modules/hypershift"
  cluster_name         = module.cluster.cluster_name
  cluster_arn          = module.cluster.cluster_arn
  region               = var.region
  oidc_bucket          = var.oidc_bucket
  vpc_id               = module.cluster.vpc_id
  private_link         = var.hypershift_private_link
  public_zone          = var.hypershift_public_zone
  etcd_backup_bucket   = var.etcd_backup_bucket
  permissions_boundary = "arn:${data.aws_partition.current.partition}:iam::${var.account_id}:policy/${var.permissions_boundary}"
  tags                 = var.tags
}

module "maestro_agent" {
  source               = "../modules/maestro-agent"
  region               = var.region
  cluster_name         = module.cluster.cluster_name
  cluster_arn          = module.cluster.cluster_arn
  consumer_name        = var.maestro_consumer_name
  permissions_boundary = "arn:${data.aws_partition.current.partition}:iam::${var.account_id}:policy/${var.permissions_boundary}"
  tags                 = var.tags
  providers = {
    aws          = aws
    aws.regional = aws.regional
  }
}

# External Secrets Operator's role: the Maestro agent's MQTT credentials
# reach the cluster as a Kubernetes Secret (charts/secrets-sync), read by the
# operator's controller with this role and no other.
module "external_secrets" {
  source               = "../modules/external-secrets"
  cluster_name         = module.cluster.cluster_name
  cluster_arn          = module.cluster.cluster_arn
  region               = var.region
  secret_arns          = [module.maestro_agent.secret_arn]
  permissions_boundary = "arn:${data.aws_partition.current.partition}:iam::${var.account_id}:policy/${var.permissions_boundary}"
  tags                 = var.tags
}

module "argocd_health" {
  source               = "../modules/argocd-health"
  cluster_name         = module.cluster.cluster_name
  cluster_arn          = module.cluster.cluster_arn
  region               = var.region
  health_bucket        = var.health_bucket
  permissions_boundary = "arn:${data.aws_partition.current.partition}:iam::${var.account_id}:policy/${var.permissions_boundary}"
  tags                 = var.tags
}

# The OIDC bucket was a private state-bucket module before HyperShift's
# module made it public for reading.
moved {
  from = module.oidc_bucket.aws_s3_bucket.this
  to   = module.hypershift.aws_s3_bucket.oidc
}

moved {
  from = module.oidc_bucket.aws_s3_bucket_versioning.this
  to   = module.hypershift.aws_s3_bucket_versioning.oidc
}

moved {
  from = module.oidc_bucket.aws_s3_bucket_server_side_encryption_configuration.this
  to   = module.hypershift.aws_s3_bucket_server_side_encryption_configuration.oidc
}

moved {
  from = module.oidc_bucket.aws_s3_bucket_public_access_block.this
  to   = module.hypershift.aws_s3_bucket_public_access_block.oidc
}

# Elastic Load Balancing's service-linked role. ELB creates it the first
# time a load balancer is made in an account, as the principal making it
# ("Service-linked roles for Elastic Load Balancing", ELB User Guide:
# that principal needs iam:CreateServiceLinkedRole). Here that principal
# is the load balancer controller, whose permissions boundary denies every
# IAM action, so its first load balancer would fail: the role is made
# here, by the deploy role (ServiceLinkedRolesOfClusterServices), before
# any Service asks for one.
resource "aws_iam_service_linked_role" "elb" {
  aws_service_name = "elasticloadbalancing.amazonaws.com"
}
