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

variable "secret_arns" {
  type        = list(string)
  description = "The Secrets Manager secrets the controller may read: those the cluster's components are given, no other."
  validation {
    condition     = length(var.secret_arns) > 0 && alltrue([for a in var.secret_arns : can(regex("^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:[^*?]+$", a))])
    error_message = "secret_arns must name at least one secret, each by its full ARN (no wildcards)."
  }
}

variable "permissions_boundary" {
  type    = string
  default = null
}

variable "tags" {
  type    = map(string)
  default = {}
}
