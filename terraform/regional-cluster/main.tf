# The regional cluster of one region: its network, its EKS cluster, the
# platform API's gateway, Maestro's MQTT broker policy, CLM's database and
# the region's image repositories.

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
}

module "api_gateway" {
  source      = "../modules/api-gateway"
  name        = "${var.region}-platform-api"
  backend_url = "https://${var.platform_api_domain}"
}

module "maestro_iot" {
  source = "../modules/maestro-iot"
  region = var.region
}

module "clm_database" {
  source     = "../modules/clm-database"
  name       = "${var.region}-clm"
  vpc_id     = module.cluster.vpc_id
  vpc_cidr   = var.vpc_cidr
  subnet_ids = module.cluster.private_subnet_ids
}

module "ecr" {
  source       = "../modules/ecr"
  repositories = var.ecr_repositories
}
