output "arn" {
  value = module.role.arn
}

output "name" {
  value = module.role.name
}
