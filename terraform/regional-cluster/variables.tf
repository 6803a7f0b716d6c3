variable "platform_api_domain" {
  type        = string
  description = "Domain the regional platform API is served on."
}

variable "platform_api_zone_delegated" {
  type        = bool
  description = "Whether the parent domain delegates platform_api_domain to the zone this root makes (platform_api.zone_delegated). Until then the apply makes the zone and the certificate and serves nothing: see the output platform_api_delegation."
}

# Set by the central pipeline at run time (terraform.Runtime in Go).

variable "account_id" {
  type        = string
  description = "The regional account; the provider refuses any other."
}

variable "assume_role_arn" {
  type        = string
  description = "The role in the regional account the provider acts through (its OrganizationAccountAccessRole)."
}

variable "organization_id" {
  type        = string
  description = "The organisation (o-...): with root_id and management_ou_id, whose accounts may pull from the region's repositories."
}

variable "root_id" {
  type = string
}

variable "management_ou_id" {
  type        = string
  description = "The OU of the region's management cluster accounts."
}

variable "ecr_repositories" {
  type        = list(string)
  description = "The region's image repositories: the platform's images are pulled from here, never from quay.io."
  default = [
    "platform/platform-api", "platform/clm", "platform/maestro", "platform/hypershift-operator",
    "platform/regionctl-runner",
  ]
}


variable "maestro_broker_domain" {
  type        = string
  description = "The name Maestro's server and agents reach the region's IoT Core broker at, in the platform API's zone (render names it mqtt.<platform_api.domain>)."
}
