# The network and EKS cluster every cluster type runs on.

module "vpc" {
  source             = "../vpc"
  name               = "${var.region}-${var.name}"
  cidr               = var.vpc_cidr
  private_subnets    = var.private_subnets
  public_subnets     = var.public_subnets
  availability_zones = var.availability_zones
  nat_gateways       = var.nat_gateways
  tags               = var.tags
}

module "eks" {
  source                 = "../eks"
  name                   = var.name
  region                 = var.region
  kubernetes_version     = var.eks_version
  subnet_ids             = module.vpc.private_subnet_ids
  endpoint_public_access = var.endpoint_public_access
  node_instance_type     = var.node_instance_type
  node_min               = var.node_min
  node_max               = var.node_max
  permissions_boundary   = var.permissions_boundary
  vpc_id                 = module.vpc.vpc_id
  runner_image           = var.runner_image
  gitops_repo_url        = var.gitops_repo_url
  tags                   = var.tags
}
