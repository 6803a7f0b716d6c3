output "mqtt_endpoint" {
  description = "The region's broker: AWS IoT Core of the regional account."
  value       = module.agent.endpoint
}

output "secret_arn" {
  description = "The agent's MQTT credentials (endpoint, client id, certificate, key) in the cluster's account."
  value       = module.agent.secret_arn
}

output "role_arn" {
  value = module.agent.role_arn
}

output "certificate_arn" {
  value = module.agent.certificate_arn
}
