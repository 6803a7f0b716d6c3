output "role_arn" {
  value = module.role.arn
}
