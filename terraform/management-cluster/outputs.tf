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

output "bootstrap_role_arn" {
  description = "The role of the bootstrap that installs Argo CD from inside the cluster's VPC: the one access entry of its API (cluster admin)."
  value       = module.cluster.bootstrap_role_arn
}

output "lb_controller_role_arn" {
  description = "The AWS Load Balancer Controller's role (kube-system/aws-load-balancer-controller)."
  value       = module.cluster.lb_controller_role_arn
}

output "maestro_mqtt_endpoint" {
  description = "The region's broker (AWS IoT Core of the regional account), read from that account."
  value       = module.maestro_agent.mqtt_endpoint
}

output "maestro_agent_secret_arn" {
  description = "The agent's MQTT credentials in this account (read by maestro/maestro-agent through maestro_agent_role_arn)."
  value       = module.maestro_agent.secret_arn
}

output "maestro_agent_role_arn" {
  value = module.maestro_agent.role_arn
}

output "etcd_backup_role_arn" {
  description = "The role hypershift/etcd-backup holds to add snapshots to the region's DR account."
  value       = module.hypershift.etcd_backup_role_arn
}

output "oidc_issuer" {
  description = "The cluster's OIDC issuer: its ServiceAccounts hold IAM roles through it."
  value       = module.cluster.oidc_issuer
}

output "bootstrap" {
  description = "The bootstrap task the regional pipeline starts after each apply: its ECS cluster, task definition, subnets and security group."
  value       = module.cluster.bootstrap
}
