output "policy_name" {
  value = module.server.policy_name
}

output "mqtt_endpoint" {
  description = "Where Maestro's server and agents connect: this account's IoT Core broker."
  value       = module.server.endpoint
}

output "server_secret_arn" {
  description = "The Maestro server's MQTT credentials (endpoint, client id, certificate, key)."
  value       = module.server.secret_arn
}

output "server_role_arn" {
  value = module.server.role_arn
}

output "broker_host" {
  description = "The broker's name the Maestro charts connect to (port 8883); served once the zone is delegated."
  value       = var.broker_domain
}
