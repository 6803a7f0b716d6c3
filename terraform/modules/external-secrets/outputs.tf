output "role_arn" {
  value = module.controller.arn
}
