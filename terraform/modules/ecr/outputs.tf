output "repository_urls" {
  description = "Repository URL by name."
  value       = { for name, r in aws_ecr_repository.this : name => r.repository_url }
}
