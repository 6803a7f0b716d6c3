output "endpoint" {
  description = "The broker: AWS IoT Core of the broker's account."
  value       = local.endpoint
}

output "secret_arn" {
  value = aws_secretsmanager_secret.this.arn
}

output "role_arn" {
  value = module.role.arn
}

output "certificate_arn" {
  value = aws_iot_certificate.this.arn
}

output "policy_name" {
  value = aws_iot_policy.this.name
}
