variable "repositories" {
  type        = list(string)
  description = "Repository names, such as platform/hypershift-operator."
}

variable "pull_org_path" {
  type        = string
  description = "aws:PrincipalOrgPaths of the accounts that may pull: the region's management cluster OU (o-.../r-.../*ou-.../)."
  validation {
    condition     = can(regex("^o-[a-z0-9]+/r-[a-z0-9]+/(\\*)?ou-[a-z0-9-]+/$", var.pull_org_path))
    error_message = "pull_org_path names one OU of the organisation: o-<org>/r-<root>/*ou-<ou>/."
  }
}

variable "untagged_days" {
  type    = number
  default = 14
}

variable "tags" {
  type    = map(string)
  default = {}
}
