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

variable "cluster_arn" {
  type        = string
  description = "The EKS cluster's ARN: the roles' trust admits EKS Pod Identity for this cluster only."
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

variable "etcd_backup_bucket" {
  type        = string
  description = "The region's etcd snapshot bucket, in its DR account."
}

variable "etcd_backup_service_account" {
  type        = string
  default     = "hypershift:etcd-backup"
  description = "namespace:name of the ServiceAccount that writes etcd snapshots."
}

variable "permissions_boundary" {
  type        = string
  description = "ARN of the boundary every role created here carries."
}

variable "tags" {
  type    = map(string)
  default = {}
}
