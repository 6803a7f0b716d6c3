output "endpoint" {
  description = "host:port of the database."
  value       = aws_db_instance.this.endpoint
}

output "master_user_secret_arn" {
  description = "The Secrets Manager secret AWS keeps the master password in: what CLM's deployment references."
  value       = aws_db_instance.this.master_user_secret[0].secret_arn
}
