# The region's image repositories: the platform's images are mirrored here
# and pulled from here, never from quay.io. Tags are immutable (a digest pins
# what runs anyway), images are scanned on push, and untagged images expire.

resource "aws_ecr_repository" "this" {
  for_each             = toset(var.repositories)
  name                 = each.value
  image_tag_mutability = "IMMUTABLE"
  image_scanning_configuration {
    scan_on_push = true
  }
  encryption_configuration {
    encryption_type = "AES256"
  }
  tags = var.tags
}

resource "aws_ecr_lifecycle_policy" "this" {
  for_each   = aws_ecr_repository.this
  repository = each.value.name
  policy = jsonencode({
    rules = [{
      rulePriority = 1
      description  = "Expire untagged images after ${var.untagged_days} days"
      selection = {
        tagStatus   = "untagged"
        countType   = "sinceImagePushed"
        countUnit   = "days"
        countNumber = var.untagged_days
      }
      action = { type = "expire" }
    }]
  })
}

# The region's management clusters pull from here too, from accounts of
# their own: any principal of an account in the region's management
# cluster OU may read images (its own policy must allow it as well, as the
# node role's AmazonEC2ContainerRegistryReadOnly does); nothing else
# outside this account may do anything.
resource "aws_ecr_repository_policy" "this" {
  for_each   = aws_ecr_repository.this
  repository = each.value.name
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid       = "ManagementClustersOfRegionPull"
      Effect    = "Allow"
      Principal = "*"
      Action    = ["ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer"]
      Condition = {
        "ForAnyValue:StringLike" = { "aws:PrincipalOrgPaths" = [var.pull_org_path] }
      }
    }]
  })
}
