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

variable "cluster_arn" {
  type        = string
  description = "The EKS cluster whose ServiceAccount holds the credentials' reader role (EKS Pod Identity)."
}

variable "permissions_boundary" {
  type = string
}

variable "tags" {
  type    = map(string)
  default = {}
}
