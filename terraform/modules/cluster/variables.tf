variable "name" {
  type = string
}

variable "region" {
  type = string
}

variable "vpc_cidr" {
  type = string
}

variable "private_subnets" {
  type = list(string)
}

variable "public_subnets" {
  type    = list(string)
  default = []
}

variable "availability_zones" {
  type = number
}

variable "nat_gateways" {
  type    = string
  default = "per_az"
}

variable "eks_version" {
  type = string
}

variable "node_instance_type" {
  type = string
}

variable "node_min" {
  type = number
}

variable "node_max" {
  type = number
}

variable "endpoint_public_access" {
  type    = bool
  default = false
}

variable "tags" {
  type    = map(string)
  default = {}
}

variable "permissions_boundary" {
  type        = string
  default     = null
  description = "ARN of the permissions boundary of the cluster's roles; null for none."
}

variable "gitops_repo_url" {
  type        = string
  description = "The fleet repository: the bootstrap task refuses a root Application of any other source."
}

variable "runner_image" {
  type        = string
  description = "The regionctl runner image by digest: the bootstrap task runs it."
}
