variable "region" {
  type = string
}

variable "cluster_name" {
  type        = string
  description = "The regional cluster, whose maestro/maestro ServiceAccount holds the server's role."
}

variable "oidc_provider_arn" {
  type = string
}

variable "oidc_issuer" {
  type = string
}

variable "tags" {
  type    = map(string)
  default = {}
}
