# A bucket other accounts of the organisation write into, each under its
# own account's prefix, as its rendered policy allows and nothing else:
# a region's etcd snapshots in its DR account (the FAQ: a dedicated DR
# account per region, from which a lost management cluster is restored;
# deploy/<env>/<region>/iam/etcd-backup-bucket-policy.json), and a region's
# clusters' health reports in the management account
# (health-bucket-policy.json). Only the owning account deletes.

# Versioned, encrypted, never public: what a state bucket is.
module "bucket" {
  source = "../state-bucket"
  name   = var.name
  tags   = var.tags
}

# Objects another account writes belong to this account, so that reading
# them (a restore, the rollout's health gate) never depends on the account
# that wrote them.
resource "aws_s3_bucket_ownership_controls" "this" {
  bucket = module.bucket.name
  rule {
    object_ownership = "BucketOwnerEnforced"
  }
}

# Objects are kept for retention_days, overwritten versions too; then S3
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
