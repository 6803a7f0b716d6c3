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

variable "platform_api_domain" {
  type        = string
  description = "Domain the regional platform API is served on."
}

# Set by the central pipeline at run time (terraform.Runtime in Go).

variable "account_id" {
  type        = string
  description = "The regional account; the provider refuses any other."
}

variable "assume_role_arn" {
  type        = string
  description = "The role in the regional account the provider acts through (its OrganizationAccountAccessRole)."
}

variable "assume_role_session_name" {
  type = string
}

variable "organization_id" {
  type        = string
  description = "The organisation (o-...): with root_id and management_ou_id, whose accounts may pull from the region's repositories."
}

variable "root_id" {
  type = string
}

variable "management_ou_id" {
  type        = string
  description = "The OU of the region's management cluster accounts."
}

variable "ecr_repositories" {
  type        = list(string)
  description = "The region's image repositories: the platform's images are pulled from here, never from quay.io."
  default = [
    "platform/platform-api", "platform/clm", "platform/maestro", "platform/hypershift-operator",
    "platform/regionctl-runner",
  ]
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
