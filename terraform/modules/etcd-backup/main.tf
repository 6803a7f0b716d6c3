# The bucket of a region's etcd snapshots, in the region's DR account (the
# FAQ: a dedicated DR account per region, from which a lost management
# cluster and its hosted control planes are restored). Its policy comes
# rendered (deploy/<env>/<region>/iam/etcd-backup-bucket-policy.json): each
# management cluster's etcd-backup role may add snapshots under its own
# account's prefix and nothing else; only the central pipeline deletes.

# Versioned, encrypted, never public: what a state bucket is.
module "bucket" {
  source = "../state-bucket"
  name   = var.name
  tags   = var.tags
}

# Objects another account writes belong to this account, so that a
# restore from here never depends on the account that wrote them.
resource "aws_s3_bucket_ownership_controls" "this" {
  bucket = module.bucket.name
  rule {
    object_ownership = "BucketOwnerEnforced"
  }
}

# Snapshots are kept for retention_days, overwritten versions too; then S3
# expires them (a lifecycle rule is not subject to the bucket policy).
resource "aws_s3_bucket_lifecycle_configuration" "this" {
  bucket = module.bucket.name
  rule {
    id     = "retention"
    status = "Enabled"
    filter {}
    expiration {
      days = var.retention_days
    }
    noncurrent_version_expiration {
      noncurrent_days = var.retention_days
    }
    abort_incomplete_multipart_upload {
      days_after_initiation = 1
    }
  }
  depends_on = [module.bucket]
}

resource "aws_s3_bucket_policy" "this" {
  bucket     = module.bucket.name
  policy     = var.policy_json
  depends_on = [module.bucket]
}
