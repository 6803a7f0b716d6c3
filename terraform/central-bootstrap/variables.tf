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

variable "pipeline_policy_json" {
  type        = string
  description = "The rendered region-scoped policy of the regional pipeline (deploy/<env>/<region>/iam/regional-pipeline-policy.json)."
}

variable "deploy_role_trust_json" {
  type        = string
  description = "The rendered trust policy of ManagementClusterDeployRole; $${pipeline_account_id} is replaced with this account's id."
}

variable "state_bucket" {
  type        = string
  description = "State bucket of the regional pipeline."
}

variable "tags" {
  type    = map(string)
  default = {}
}
