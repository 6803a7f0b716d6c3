# A management cluster: hosts HyperShift control planes, with the bucket that
# serves their OIDC documents.

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
  permissions_boundary   = "arn:${data.aws_partition.current.partition}:iam::${var.account_id}:policy/${var.permissions_boundary}"
}

module "oidc_bucket" {
  source = "../modules/state-bucket"
  name   = var.oidc_bucket
}
