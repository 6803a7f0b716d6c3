output "cluster_name" {
  value = module.cluster.cluster_name
}

output "vpc_id" {
  value = module.cluster.vpc_id
}

output "platform_api_endpoint" {
  description = "Base URL of the platform API; the regional pipeline registers management clusters here. Empty until the API's zone is delegated (platform_api_delegation)."
  value       = module.api_gateway.endpoint
}

output "platform_api_id" {
  description = "The platform API's id: the regional pipeline may invoke this API only."
  value       = module.api_gateway.api_id
}

output "platform_api_name_servers" {
  description = "The name servers of the platform API's zone (api.<region>.<domain>): delegate it from the parent domain."
  value       = module.api_gateway.name_servers
}

output "platform_api_delegation" {
  description = "The NS records the parent domain must hold (zone, name_servers) before platform_api.zone_delegated is set to true and the API is served."
  value       = module.api_gateway.delegation
}

output "platform_api_target_group_arn" {
  description = "The internal ALB's target group the frontend API's pods register in."
  value       = module.api_gateway.target_group_arn
}

output "oidc_issuer" {
  description = "The regional cluster's OIDC issuer; the regional pipeline's role trusts its Tekton ServiceAccount through it."
  value       = module.cluster.oidc_issuer
}

output "maestro_mqtt_endpoint" {
  description = "The region's MQTT broker (AWS IoT Core of the regional account), read from the account."
  value       = module.maestro_iot.mqtt_endpoint
}

output "maestro_broker_host" {
  description = "The name Maestro's server and agents reach the broker at (port 8883), served once the API's zone is delegated."
  value       = module.maestro_iot.broker_host
}

output "maestro_server_secret_arn" {
  description = "The Maestro server's MQTT credentials (read by maestro/maestro through maestro_server_role_arn)."
  value       = module.maestro_iot.server_secret_arn
}

output "maestro_server_role_arn" {
  value = module.maestro_iot.server_role_arn
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

output "bootstrap_role_arn" {
  description = "The role of the bootstrap that installs Argo CD from inside the cluster's VPC: the one access entry of its API (cluster admin)."
  value       = module.cluster.bootstrap_role_arn
}

output "lb_controller_role_arn" {
  description = "The AWS Load Balancer Controller's role (kube-system/aws-load-balancer-controller)."
  value       = module.cluster.lb_controller_role_arn
}

output "bootstrap" {
  description = "The bootstrap task the regional pipeline starts after each apply: its ECS cluster, task definition, subnets and security group."
  value       = module.cluster.bootstrap
}
