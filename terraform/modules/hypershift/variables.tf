variable "cluster_name" {
  type = string
}

variable "region" {
  type = string
}

variable "oidc_bucket" {
  type        = string
  description = "Bucket serving the hosted clusters' OIDC documents; readable by anyone."
}

variable "oidc_issuer" {
  type        = string
  description = "The management cluster's own OIDC issuer URL (its ServiceAccounts hold the roles)."
}

variable "oidc_provider_arn" {
  type        = string
  description = "The IAM identity provider of oidc_issuer."
}

variable "vpc_id" {
  type        = string
  description = "The management cluster's VPC, which sees the PrivateLink zone."
}

variable "private_link" {
  type    = bool
  default = true
}

variable "public_zone" {
  type        = string
  default     = ""
  description = "Public DNS zone of the hosted clusters' names; empty: none, and no external-dns or cert-manager role."
}

variable "permissions_boundary" {
  type        = string
  description = "ARN of the boundary every role created here carries."
}

variable "tags" {
  type    = map(string)
  default = {}
}
