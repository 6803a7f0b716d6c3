output "mqtt_endpoint" {
  description = "The region's broker: AWS IoT Core of the regional account."
  value       = local.endpoint
}

output "secret_arn" {
  description = "The agent's MQTT credentials (endpoint, client id, certificate, key) in the cluster's account."
  value       = aws_secretsmanager_secret.agent.arn
}

output "role_arn" {
  value = module.role.arn
}

output "certificate_arn" {
  value = aws_iot_certificate.agent.arn
}
