variable "name" {
  type = string
}

variable "backend_url" {
  type        = string
  description = "URL the API forwards to (the platform API service)."
}

variable "tags" {
  type    = map(string)
  default = {}
}
