output "oidc_bucket" {
  value = aws_s3_bucket.oidc.id
}

# Where hosted clusters' issuers live: https://<bucket>.s3.<region>.amazonaws.com/<cluster>.
output "oidc_issuer_base" {
  value = "https://${aws_s3_bucket.oidc.bucket_regional_domain_name}"
}

output "operator_role_arn" {
  value = aws_iam_role.operator.arn
}

output "private_link_zone_id" {
  value = var.private_link ? aws_route53_zone.private_link[0].zone_id : null
}

output "public_zone_id" {
  value = local.public ? aws_route53_zone.public[0].zone_id : null
}

output "public_zone_name_servers" {
  value = local.public ? aws_route53_zone.public[0].name_servers : []
}

output "external_dns_role_arn" {
  value = local.public ? aws_iam_role.dns["external-dns"].arn : null
}

output "cert_manager_role_arn" {
  value = local.public ? aws_iam_role.dns["cert-manager"].arn : null
}

output "etcd_backup_role_arn" {
  value = aws_iam_role.etcd_backup.arn
}
