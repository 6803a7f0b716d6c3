variable "cluster_arn" {
  type        = string
  description = "The cluster's ARN, which EKS Pod Identity sets as the eks-cluster-arn session tag."
}

variable "service_account" {
  type        = string
  description = "namespace:name of the one ServiceAccount that holds the role."
  validation {
    condition     = can(regex("^[a-z0-9]([-a-z0-9]*[a-z0-9])?:[a-z0-9]([-.a-z0-9]*[a-z0-9])?$", var.service_account))
    error_message = "service_account must be namespace:name, each a Kubernetes name."
  }
}
