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

variable "regional_account_id" {
  type        = string
  description = "The region's regional account, where the regional pipeline runs and Maestro's broker is (aws.regional)."
}

