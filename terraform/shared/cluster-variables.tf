# The variables every cluster root (regional-cluster, management-cluster)
# declares alike. tools/tfshared writes them into each of those roots as
# cluster-variables.tf (make generate); change them here, never there.

variable "region" {
  type        = string
  description = "AWS region of the cluster."
}

variable "cluster_name" {
  type = string
}

variable "environment" {
  type = string
}

variable "sector" {
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

variable "assume_role_session_name" {
  type = string
}

variable "gitops_repo_url" {
  type        = string
  description = "The fleet repository (gitops.repo_url): the one source the bootstrap task accepts for the cluster's root Application."
  validation {
    condition     = can(regex("^https://[^[:space:]]+$", var.gitops_repo_url))
    error_message = "gitops_repo_url must be an https URL."
  }
}

variable "runner_image" {
  type        = string
  description = "The regionctl runner image by digest (gitops.runner_image): the cluster's bootstrap task runs it."
  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9._/:-]*@sha256:[0-9a-f]{64}$", var.runner_image))
    error_message = "runner_image must be an image reference by digest."
  }
}

variable "health_bucket" {
  type        = string
  description = "The region's bucket of its clusters' health reports, in the management account (argocd.health_bucket): the cluster's health reporter puts its report there, under its account's prefix."
}
