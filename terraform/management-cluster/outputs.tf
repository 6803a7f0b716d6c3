output "cluster_name" {
  value = module.eks.name
}

output "vpc_id" {
  value = module.vpc.vpc_id
}

output "maestro_consumer_name" {
  value = var.maestro_consumer_name
}
