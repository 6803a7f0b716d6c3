output "cluster_name" {
  value = module.cluster.cluster_name
}

output "vpc_id" {
  value = module.cluster.vpc_id
}

output "platform_api_endpoint" {
  description = "Base URL of the platform API; the regional pipeline registers management clusters here."
  value       = module.api_gateway.endpoint
}

output "oidc_issuer" {
  description = "The regional cluster's OIDC issuer; the regional pipeline's role trusts its Tekton ServiceAccount through it."
  value       = module.cluster.oidc_issuer
}

output "maestro_mqtt_endpoint" {
  description = "The region's MQTT broker (AWS IoT Core of the regional account), read from the account."
  value       = module.maestro_iot.mqtt_endpoint
}

output "clm_database_endpoint" {
  description = "host:port of CLM's database."
  value       = module.clm_database.endpoint
}

output "clm_database_secret_arn" {
  description = "The Secrets Manager secret holding the database's master password (AWS-managed)."
  value       = module.clm_database.master_user_secret_arn
}

output "ecr_repository_urls" {
  description = "The region's image repositories by name."
  value       = module.ecr.repository_urls
}
