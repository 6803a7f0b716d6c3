output "name" {
  value = aws_eks_cluster.this.name
}

output "arn" {
  value = aws_eks_cluster.this.arn
}

output "endpoint" {
  value = aws_eks_cluster.this.endpoint
}

output "oidc_issuer" {
  value = aws_eks_cluster.this.identity[0].oidc[0].issuer
}

output "oidc_provider_arn" {
  value = aws_iam_openid_connect_provider.this.arn
}

output "bootstrap_role_arn" {
  description = "The one principal with an access entry (cluster admin): the bootstrap task in the cluster's VPC."
  value       = module.bootstrap_role.arn
}

output "lb_controller_role_arn" {
  value = module.lb_controller_role.arn
}

output "bootstrap" {
  description = "What the regional pipeline needs to start the bootstrap task: its ECS cluster, task definition, subnets and security group."
  value = {
    cluster         = aws_ecs_cluster.bootstrap.arn
    task_definition = aws_ecs_task_definition.bootstrap.arn
    subnets         = var.subnet_ids
    security_group  = aws_security_group.bootstrap.id
  }
}
