output "pipeline_role_arn" {
  value = module.pipeline_role.arn
}

output "deploy_role_arn" {
  value = module.deploy_role.arn
}

output "state_bucket" {
  value = module.state_bucket.name
}
