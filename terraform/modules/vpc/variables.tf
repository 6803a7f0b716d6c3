variable "name" {
  type        = string
  description = "Name prefix of every resource."
}

variable "cidr" {
  type        = string
  description = "CIDR block of the VPC."
}

variable "private_subnets" {
  type        = list(string)
  description = "CIDR blocks of the private subnets, one per availability zone."
}

variable "public_subnets" {
  type        = list(string)
  default     = []
  description = "CIDR blocks of the public subnets; none means no internet gateway or NAT."
}

variable "availability_zones" {
  type        = number
  description = "How many availability zones to spread the subnets over."
}

variable "nat_gateways" {
  type        = string
  default     = "per_az"
  description = "single or per_az."
  validation {
    condition     = contains(["single", "per_az"], var.nat_gateways)
    error_message = "nat_gateways must be single or per_az."
  }
}

variable "tags" {
  type    = map(string)
  default = {}
}
