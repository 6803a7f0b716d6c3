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

variable "oidc_bucket" {
  type        = string
  description = "Bucket serving the OIDC documents of the hosted control planes."
}

variable "hypershift_private_link" {
  type    = bool
  default = true
}

variable "hypershift_public_zone" {
  type        = string
  default     = ""
  description = "Public DNS zone of the hosted clusters' names; empty: private hosted clusters only."
}

variable "maestro_consumer_name" {
  type = string
}

variable "etcd_backup_bucket" {
  type        = string
  description = "The region's etcd snapshot bucket, in its DR account: the cluster adds its snapshots under its account's prefix."
}

variable "permissions_boundary" {
  type        = string
  description = "Name of the managed policy every role this root creates must carry as its permissions boundary (ManagementClusterDeployRole may create no other)."
}

# Set by the regional pipeline at run time (terraform.Runtime in Go).

variable "account_id" {
  type        = string
  description = "The management cluster's account; the provider refuses any other."
}

variable "assume_role_arn" {
  type        = string
  description = "ManagementClusterDeployRole of the cluster's account."
}

variable "assume_role_external_id" {
  type        = string
  description = "The ExternalId of the region's pipeline (regional-pipeline-<region>)."
}

variable "assume_role_session_name" {
  type = string
}

variable "regional_account_id" {
  type        = string
  description = "The region's regional account, where the regional pipeline runs and Maestro's broker is (aws.regional)."
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
