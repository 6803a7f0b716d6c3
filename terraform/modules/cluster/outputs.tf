output "cluster_name" {
  value = module.eks.name
}

output "cluster_arn" {
  value = module.eks.arn
}

output "vpc_id" {
  value = module.vpc.vpc_id
}

output "oidc_issuer" {
  value = module.eks.oidc_issuer
}

output "oidc_provider_arn" {
  value = module.eks.oidc_provider_arn
}

output "private_subnet_ids" {
  value = module.vpc.private_subnet_ids
}

output "bootstrap_role_arn" {
  value = module.eks.bootstrap_role_arn
}

output "lb_controller_role_arn" {
  value = module.eks.lb_controller_role_arn
}

output "bootstrap" {
  value = module.eks.bootstrap
}
