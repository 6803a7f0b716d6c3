# The regional cluster of one region: its network, its EKS cluster, the
# platform API's entry (API Gateway, VPC link, internal ALB, its own name and
# certificate), Maestro's MQTT broker and the server's credentials, CLM's database and the region's
# image repositories.

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
}

module "api_gateway" {
  source     = "../modules/api-gateway"
  name       = "${var.region}-api"
  region     = var.region
  domain     = var.platform_api_domain
  delegated  = var.platform_api_zone_delegated
  vpc_id     = module.cluster.vpc_id
  vpc_cidr   = var.vpc_cidr
  subnet_ids = module.cluster.private_subnet_ids
}

module "maestro_iot" {
  source        = "../modules/maestro-iot"
  region        = var.region
  cluster_name  = module.cluster.cluster_name
  cluster_arn   = module.cluster.cluster_arn
  broker_domain = var.maestro_broker_domain
  zone_id       = module.api_gateway.zone_id
  delegated     = var.platform_api_zone_delegated
  providers = {
    aws = aws
  }
}

# External Secrets Operator's role: the Maestro server's MQTT credentials
# reach the cluster as a Kubernetes Secret (charts/secrets-sync).
module "external_secrets" {
  source       = "../modules/external-secrets"
  cluster_name = module.cluster.cluster_name
  cluster_arn  = module.cluster.cluster_arn
  region       = var.region
  secret_arns  = [module.maestro_iot.server_secret_arn]
  tags         = var.tags
}

module "argocd_health" {
  source        = "../modules/argocd-health"
  cluster_name  = module.cluster.cluster_name
  cluster_arn   = module.cluster.cluster_arn
  region        = var.region
  health_bucket = var.health_bucket
  tags          = var.tags
}

module "clm_database" {
  source     = "../modules/clm-database"
  name       = "${var.region}-clm"
  vpc_id     = module.cluster.vpc_id
  vpc_cidr   = var.vpc_cidr
  subnet_ids = module.cluster.private_subnet_ids
}

module "ecr" {
  source        = "../modules/ecr"
  repositories  = var.ecr_repositories
  pull_org_path = "${var.organization_id}/${var.root_id}/*${var.management_ou_id}/"
}
