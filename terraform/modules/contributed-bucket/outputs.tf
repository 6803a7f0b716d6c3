output "name" {
  value = module.bucket.name
}

output "arn" {
  value = module.bucket.arn
}
