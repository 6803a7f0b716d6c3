variable "region" {
  type = string
}

variable "cluster_name" {
  type = string
}

variable "consumer_name" {
  type        = string
  description = "The cluster's name as a Maestro consumer: its MQTT client id and topics."
}

variable "oidc_provider_arn" {
  type = string
}

variable "oidc_issuer" {
  type = string
}

variable "permissions_boundary" {
  type = string
}

variable "tags" {
  type    = map(string)
  default = {}
}
