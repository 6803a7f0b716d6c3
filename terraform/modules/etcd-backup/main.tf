# The bucket of a region's etcd snapshots, in the region's DR account (the
# FAQ: a dedicated DR account per region, from which a lost management
# cluster and its hosted control planes are restored). Its policy comes
# rendered (deploy/<env>/<region>/iam/etcd-backup-bucket-policy.json): each
# management cluster's etcd-backup role may add snapshots under its own
# account's prefix and nothing else; only the central pipeline deletes.

resource "aws_s3_bucket" "this" {
  bucket = var.name
  tags   = var.tags
}

# Objects another account writes belong to this account, so that a
# restore from here never depends on the account that wrote them.
resource "aws_s3_bucket_ownership_controls" "this" {
  bucket = aws_s3_bucket.this.id
  rule {
    object_ownership = "BucketOwnerEnforced"
  }
}

resource "aws_s3_bucket_versioning" "this" {
  bucket = aws_s3_bucket.this.id
  versioning_configuration {
    status = "Enabled"
  }
}

resource "aws_s3_bucket_server_side_encryption_configuration" "this" {
  bucket = aws_s3_bucket.this.id
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm = "AES256"
    }
  }
}

resource "aws_s3_bucket_public_access_block" "this" {
  bucket                  = aws_s3_bucket.this.id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

# Snapshots are kept for retention_days, overwritten versions too; then S3
# expires them (a lifecycle rule is not subject to the bucket policy).
resource "aws_s3_bucket_lifecycle_configuration" "this" {
  bucket = aws_s3_bucket.this.id
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
  depends_on = [aws_s3_bucket_versioning.this]
}

resource "aws_s3_bucket_policy" "this" {
  bucket     = aws_s3_bucket.this.id
  policy     = var.policy_json
  depends_on = [aws_s3_bucket_public_access_block.this]
}
