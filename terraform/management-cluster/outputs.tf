output "cluster_name" {
  value = module.cluster.cluster_name
}

output "vpc_id" {
  value = module.cluster.vpc_id
}

output "maestro_consumer_name" {
  value = var.maestro_consumer_name
}

output "oidc_bucket" {
  value = module.hypershift.oidc_bucket
}

output "hosted_cluster_issuer_base" {
  value = module.hypershift.oidc_issuer_base
}

output "hypershift_operator_role_arn" {
  value = module.hypershift.operator_role_arn
}

output "private_link_zone_id" {
  value = module.hypershift.private_link_zone_id
}

output "public_zone_id" {
  value = module.hypershift.public_zone_id
}

output "public_zone_name_servers" {
  value = module.hypershift.public_zone_name_servers
}

output "external_dns_role_arn" {
  value = module.hypershift.external_dns_role_arn
}

output "cert_manager_role_arn" {
  value = module.hypershift.cert_manager_role_arn
}
