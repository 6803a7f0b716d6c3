output "pipeline_role_arn" {
  value = module.pipeline_role.arn
}

output "minting_role_arn" {
  value = try(module.minting_role[0].arn, "")
}

output "state_bucket" {
  value = module.state_bucket.name
}

output "handoff_parameter" {
  value = aws_ssm_parameter.handoff.name
}

output "etcd_backup_bucket" {
  description = "The bucket of the management clusters' etcd snapshots, in the DR account."
  value       = module.etcd_backup.name
}

output "approver_role_arns" {
  description = "The region's approver roles: of the management clusters' states, and of the regional cluster's."
  value       = concat(module.approver_role[*].arn, module.central_approver_role[*].arn)
}

output "health_bucket" {
  description = "The bucket of the region's clusters' health reports, in the management account."
  value       = module.health_bucket.name
}
