output "trust_json" {
  description = "The trust policy of the role: EKS Pod Identity, for this ServiceAccount of this cluster only."
  value       = data.aws_iam_policy_document.trust.json
}
