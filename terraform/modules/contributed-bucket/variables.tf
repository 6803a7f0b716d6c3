variable "name" {
  type = string
}

variable "retention_days" {
  type        = number
  description = "How many days an object (and an overwritten version) is kept."
}

variable "policy_json" {
  type        = string
  description = "The bucket policy, with the account and organisation ids filled in."
}

variable "tags" {
  type    = map(string)
  default = {}
}
