output "cluster_name" {
  value = module.cluster.cluster_name
}

output "vpc_id" {
  value = module.cluster.vpc_id
}

output "maestro_consumer_name" {
  value = var.maestro_consumer_name
}
