terraform {
  # use_lockfile (S3 state locking without DynamoDB) needs 1.10;
  # templatestring needs 1.9.
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

# The regional account, through the role the central pipeline's account
# step provides.
provider "aws" {
  region              = var.region
  allowed_account_ids = [var.account_id]
  assume_role {
    role_arn     = var.assume_role_arn
    session_name = var.assume_role_session_name
  }
  default_tags {
    tags = var.tags
  }
}

# The management account, with the central pipeline's own identity.
provider "aws" {
  alias               = "management"
  region              = var.region
  allowed_account_ids = [var.management_account_id]
  default_tags {
    tags = var.tags
  }
}

# The region's DR account, through the role the central pipeline's account
# step provides.
provider "aws" {
  alias               = "dr"
  region              = var.region
  allowed_account_ids = [var.dr_account_id]
  assume_role {
    role_arn     = var.dr_assume_role_arn
    session_name = var.assume_role_session_name
  }
  default_tags {
    tags = var.tags
  }
}
