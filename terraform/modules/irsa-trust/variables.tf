variable "oidc_provider_arn" {
  type = string
}

variable "oidc_issuer" {
  type        = string
  description = "The cluster's issuer URL (https://...)."
}

variable "service_accounts" {
  type        = list(string)
  description = "namespace:name of each ServiceAccount that may hold the role."
}
