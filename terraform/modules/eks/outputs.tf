output "name" {
  value = aws_eks_cluster.this.name
}

output "endpoint" {
  value = aws_eks_cluster.this.endpoint
}

output "oidc_issuer" {
  value = try(aws_eks_cluster.this.identity[0].oidc[0].issuer, "")
}
