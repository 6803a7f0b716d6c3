variable "region" {
  type = string
}

variable "environment" {
  type = string
}

variable "sector" {
  type = string
}

variable "pipeline_role_name" {
  type        = string
  description = "Name of the regional pipeline's IAM role."
}

variable "minting_role_name" {
  type = string
}

variable "deploy_role_stack_set_name" {
  type        = string
  description = "The StackSet that deploys ManagementClusterDeployRole and its boundary into every account of the region's management cluster OU."
}

variable "guardrail_policy_name" {
  type = string
}

variable "data_perimeter_policy_name" {
  type = string
}

variable "state_bucket" {
  type        = string
  description = "Bucket of the region's management cluster state, in the regional account."
}

variable "central_state_bucket" {
  type        = string
  description = "Bucket of the region's central state (the regional cluster's and this root's), in the management account."
}

variable "handoff_parameter" {
  type        = string
  description = "SSM parameter of the regional account through which the regional pipeline learns the management account and its minting role."
}

variable "mint_accounts" {
  type        = bool
  description = "Whether the region has management clusters, whose accounts its pipeline mints; without any, no minting role is made."
}

variable "tags" {
  type    = map(string)
  default = {}
}

# Set by the central pipeline at run time (terraform.Runtime in Go): ids AWS
# gives, and the role this root acts through.

variable "account_id" {
  type        = string
  description = "The regional account; the provider refuses any other."
}

variable "management_account_id" {
  type        = string
  description = "The organisation's management account, where the central pipeline runs."
}

variable "assume_role_arn" {
  type        = string
  description = "The role in the regional account the provider acts through."
}

variable "assume_role_session_name" {
  type = string
}

variable "organization_id" {
  type = string
}

variable "root_id" {
  type = string
}

variable "management_ou_id" {
  type        = string
  description = "The OU of the region's management cluster accounts (empty when the region has none)."
}

variable "regional_ou_id" {
  type        = string
  default     = ""
  description = "The OU of the region's regional account, which the guardrails bind too."
}

variable "platform_api_id" {
  type        = string
  description = "The regional root's platform API id, which the regional pipeline's policy names."
}

variable "regional_oidc_issuer" {
  type        = string
  description = "The OIDC issuer URL of the regional cluster, whose Tekton ServiceAccount the pipeline role trusts."
}

variable "platform_api_endpoint" {
  type    = string
  default = ""
}

variable "dr_account_id" {
  type        = string
  description = "The region's disaster-recovery account, which keeps the management clusters' etcd snapshots."
}

variable "dr_assume_role_arn" {
  type        = string
  description = "The role in the DR account the provider acts through (its OrganizationAccountAccessRole)."
}

variable "etcd_backup_bucket" {
  type = string
}

variable "health_bucket" {
  type        = string
  description = "The bucket of the region's clusters' health reports, in the management account (argocd.health_bucket)."
}

variable "etcd_backup_retention_days" {
  type = number
}

variable "approver_role_name" {
  type = string
}

