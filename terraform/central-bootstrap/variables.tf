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

variable "pipeline_trust_json" {
  type        = string
  description = "The rendered trust policy of the regional pipeline's role (deploy/<env>/<region>/iam/regional-pipeline-trust.json)."
}

variable "pipeline_policy_json" {
  type        = string
  description = "The rendered region-scoped policy of the regional pipeline (deploy/<env>/<region>/iam/regional-pipeline-policy.json)."
}

variable "minting_role_name" {
  type = string
}

variable "minting_trust_json" {
  type        = string
  description = "The rendered trust policy of the region's minting role (minting-role-trust.json)."
}

variable "minting_policy_json" {
  type        = string
  description = "The rendered policy of the region's minting role (minting-role-policy.json)."
}

variable "state_bucket" {
  type        = string
  description = "Bucket of the region's management cluster state, in the regional account."
}

variable "state_bucket_policy_json" {
  type = string
}

variable "central_state_bucket" {
  type        = string
  description = "Bucket of the region's central state (the regional cluster's and this root's), in the management account."
}

variable "central_state_bucket_policy_json" {
  type = string
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

variable "etcd_backup_retention_days" {
  type = number
}

variable "etcd_backup_bucket_policy_json" {
  type        = string
  description = "deploy/<env>/<region>/iam/etcd-backup-bucket-policy.json: management clusters add their own snapshots, only the central pipeline deletes."
}

variable "approver_role_name" {
  type = string
}

variable "approver_trust_json" {
  type        = string
  default     = ""
  description = "The approver roles' trust (gitops.approvers); empty: no approver roles, and no run that needs an approval can run."
}

variable "approver_policy_json" {
  type    = string
  default = ""
}

variable "central_approver_policy_json" {
  type    = string
  default = ""
}
