variable "name" {
  type = string
}

variable "path" {
  type    = string
  default = "/"
}

variable "trust_policy_json" {
  type        = string
  description = "The role's trust (assume role) policy document."
}

variable "policy_json" {
  type        = string
  default     = null
  description = "Inline permissions policy document; null for none."
}

variable "managed_policy_arns" {
  type    = list(string)
  default = []
}

variable "max_session_duration" {
  type    = number
  default = 3600
}

variable "tags" {
  type    = map(string)
  default = {}
}

variable "permissions_boundary" {
  type        = string
  default     = null
  description = "ARN of the role's permissions boundary; null for none."
}
