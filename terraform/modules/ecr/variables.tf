variable "repositories" {
  type        = list(string)
  description = "Repository names, such as platform/hypershift-operator."
}

variable "untagged_days" {
  type    = number
  default = 14
}

variable "tags" {
  type    = map(string)
  default = {}
}
