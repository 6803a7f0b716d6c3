# A management cluster: hosts HyperShift control planes, with the bucket that
# serves their OIDC documents.

module "vpc" {
  source             = "../modules/vpc"
  name               = "${var.region}-${var.cluster_name}"
  cidr               = var.vpc_cidr
  private_subnets    = var.private_subnets
  public_subnets     = var.public_subnets
  availability_zones = var.availability_zones
  nat_gateways       = var.nat_gateways
}

module "eks" {
  source                 = "../modules/eks"
  name                   = var.cluster_name
  region                 = var.region
  kubernetes_version     = var.eks_version
  subnet_ids             = module.vpc.private_subnet_ids
  endpoint_public_access = var.endpoint_public_access
  node_instance_type     = var.node_instance_type
  node_min               = var.node_min
  node_max               = var.node_max
}

module "oidc_bucket" {
  source = "../modules/state-bucket"
  name   = var.oidc_bucket
}
