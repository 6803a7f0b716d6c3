output "role_arn" {
  value = module.reporter.arn
}
