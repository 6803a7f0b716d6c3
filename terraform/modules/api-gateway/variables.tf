variable "name" {
  type        = string
  description = "Name of the API, its load balancer, target group and VPC link (at most 32 characters: the ALB's limit)."
  validation {
    condition     = length(var.name) <= 32
    error_message = "An ALB's and a target group's name are at most 32 characters."
  }
}

variable "region" {
  type = string
}

variable "domain" {
  type        = string
  description = "The name the API is served at (api.<region>.<domain>): its zone, certificate and custom domain."
}

variable "delegated" {
  type        = bool
  description = "Whether the parent domain delegates domain to this module's zone (NS records of the output delegation). Until it does, nothing that waits for the certificate is made: ACM validates only records public DNS resolves."
}

variable "validation_timeout" {
  type        = string
  default     = "75m"
  description = "How long the apply waits for ACM to issue the certificate once the zone is said to be delegated (the provider's own default); past it the apply fails."
}

variable "vpc_id" {
  type = string
}

variable "vpc_cidr" {
  type        = string
  description = "The regional cluster's VPC, where the frontend API's pods are."
}

variable "subnet_ids" {
  type        = list(string)
  description = "The private subnets of the ALB and the VPC link."
}

variable "frontend_port" {
  type        = number
  default     = 8000
  description = "The port of the frontend API's pods, which register in the target group."
}

variable "log_retention_days" {
  type    = number
  default = 90
}

variable "throttling_burst_limit" {
  type    = number
  default = 200
}

variable "throttling_rate_limit" {
  type    = number
  default = 100
}

variable "tags" {
  type    = map(string)
  default = {}
}
