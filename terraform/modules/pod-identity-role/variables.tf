variable "name" {
  type        = string
  description = "The role's name, <region>-<cluster>-<suffix> (schema.RoleSuffixes lists the suffixes)."
}

variable "cluster_name" {
  type        = string
  description = "The EKS cluster's name."
}

variable "cluster_arn" {
  type = string
}

variable "service_account" {
  type        = string
  description = "namespace:name of the one ServiceAccount that holds the role."
}

variable "policy_json" {
  type        = string
  description = "The role's inline policy: what the workload needs, nothing else."
}

variable "permissions_boundary" {
  type    = string
  default = null
}

variable "tags" {
  type    = map(string)
  default = {}
}
