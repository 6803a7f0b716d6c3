terraform {
  # use_lockfile (S3 state locking without DynamoDB) needs 1.10.
  required_version = ">= 1.10"
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = "~> 5.100"
    }
  }
  # Configured at init time: -backend-config bucket, key, region, use_lockfile.
  backend "s3" {}
}

# The cluster's account, through the role the pipeline assumed; the
# provider refuses to act in any other account.
provider "aws" {
  region              = var.region
  allowed_account_ids = [var.account_id]
  assume_role {
    role_arn     = var.assume_role_arn
    session_name = var.assume_role_session_name
    external_id  = var.assume_role_external_id
  }
  default_tags {
    tags = var.tags
  }
}

# The regional account, as the regional pipeline itself (no role assumed):
# Maestro's broker is there, and the pipeline's own policy lets it make the
# agent's certificate and policy (modules/maestro-agent), in its region only.
provider "aws" {
  alias               = "regional"
  region              = var.region
  allowed_account_ids = [var.regional_account_id]
  default_tags {
    tags = var.tags
  }
}
