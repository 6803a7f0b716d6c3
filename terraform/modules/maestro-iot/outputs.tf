output "policy_name" {
  value = aws_iot_policy.maestro.name
}
