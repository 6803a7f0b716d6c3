variable "name" {
  type        = string
  description = "Identifier of the database, its subnet group and security group."
}

variable "vpc_id" {
  type = string
}

variable "vpc_cidr" {
  type        = string
  description = "The only network the database accepts connections from."
}

variable "subnet_ids" {
  type        = list(string)
  description = "Private subnets, in at least two availability zones."
}

variable "engine_version" {
  type    = string
  default = "16"
}

variable "instance_class" {
  type    = string
  default = "db.m7g.large"
}

variable "storage_gb" {
  type    = number
  default = 50
}

variable "multi_az" {
  type    = bool
  default = true
}

variable "backup_retention_days" {
  type    = number
  default = 7
}

variable "deletion_protection" {
  type        = bool
  default     = true
  description = "Refuse to delete the database (and take a final snapshot when it is)."
}

variable "tags" {
  type    = map(string)
  default = {}
}
