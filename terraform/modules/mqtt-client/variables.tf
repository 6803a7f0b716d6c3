variable "client_id" {
  type        = string
  description = "The client's MQTT client id."
}

variable "policy_name" {
  type = string
}

variable "policy_json" {
  type        = string
  description = "The client's IoT policy: its client id and its topics only."
}

variable "secret_name" {
  type = string
}

variable "role_name" {
  type = string
}

variable "service_account" {
  type        = string
  description = "namespace:name of the ServiceAccount whose pods read the credentials."
}

variable "cluster_name" {
  type        = string
  description = "The EKS cluster the ServiceAccount is of."
}

variable "cluster_arn" {
  type = string
}

variable "thing_name" {
  type        = string
  default     = null
  description = "When set, an IoT thing of this name holds the client's certificate: a policy conditioned on iot:Connection.Thing.IsAttached then admits that certificate and no other it is attached to."
}

variable "permissions_boundary" {
  type    = string
  default = null
}

variable "tags" {
  type    = map(string)
  default = {}
}
