variable "cluster_name" {
  type        = string
  description = "The EKS cluster's name, which is the platform's cluster name."
}

variable "cluster_arn" {
  type = string
}

variable "region" {
  type = string
}

variable "health_bucket" {
  type        = string
  description = "The region's bucket of health reports, in the management account (argocd.health_bucket)."
}

variable "permissions_boundary" {
  type    = string
  default = null
}

variable "tags" {
  type    = map(string)
  default = {}
}
