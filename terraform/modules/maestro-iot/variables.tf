variable "region" {
  type = string
}

variable "cluster_name" {
  type        = string
  description = "The regional cluster, whose maestro/maestro ServiceAccount holds the server's role."
}

variable "cluster_arn" {
  type        = string
  description = "The EKS cluster whose ServiceAccount holds the credentials' reader role (EKS Pod Identity)."
}

variable "tags" {
  type    = map(string)
  default = {}
}

variable "broker_domain" {
  type        = string
  description = "The broker's name, in the platform API's zone (render names it mqtt.<platform_api.domain>): what the Maestro charts connect to."
}

variable "zone_id" {
  type        = string
  description = "The platform API's zone, where the broker's name and its certificate's validation records go."
}

variable "delegated" {
  type        = bool
  description = "Whether the parent domain delegates the zone (platform_api.zone_delegated): until then nothing waits for the certificate."
}

variable "validation_timeout" {
  type        = string
  default     = "75m"
  description = "How long the apply waits for ACM to issue the broker's certificate once the zone is said to be delegated."
}
