output "policy_name" {
  value = aws_iot_policy.maestro.name
}

output "mqtt_endpoint" {
  description = "Where Maestro's server and agents connect: this account's IoT Core broker."
  value       = "mqtts://${data.aws_iot_endpoint.mqtt.endpoint_address}:8883"
}

output "server_secret_arn" {
  description = "The Maestro server's MQTT credentials (endpoint, client id, certificate, key)."
  value       = aws_secretsmanager_secret.server.arn
}

output "server_role_arn" {
  value = module.role.arn
}
