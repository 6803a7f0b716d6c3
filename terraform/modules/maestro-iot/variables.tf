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
