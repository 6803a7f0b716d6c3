variable "name" {
  type = string
}

variable "region" {
  type = string
}

variable "kubernetes_version" {
  type = string
}

variable "subnet_ids" {
  type = list(string)
}

variable "endpoint_public_access" {
  type    = bool
  default = false
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

variable "tags" {
  type    = map(string)
  default = {}
}

variable "permissions_boundary" {
  type        = string
  default     = null
  description = "ARN of the permissions boundary of the cluster's roles; null for none."
}

variable "log_retention_days" {
  type        = number
  default     = 90
  description = "How long the control plane's logs are kept."
}

variable "vpc_id" {
  type        = string
  description = "The cluster's VPC, where the bootstrap task runs."
}

variable "gitops_repo_url" {
  type        = string
  description = "The fleet repository: the bootstrap task refuses a root Application of any other source."
}

variable "runner_image" {
  type        = string
  description = "The regionctl runner image by digest (gitops.runner_image): the bootstrap task runs it."
}
