# An IAM role with a trust policy and one inline policy, both given as JSON.

resource "aws_iam_role" "this" {
  name                 = var.name
  path                 = var.path
  assume_role_policy   = var.trust_policy_json
  max_session_duration = var.max_session_duration
  permissions_boundary = var.permissions_boundary
  tags                 = var.tags
}

resource "aws_iam_role_policy" "this" {
  count  = var.policy_json == null ? 0 : 1
  name   = var.name
  role   = aws_iam_role.this.id
  policy = var.policy_json
}

resource "aws_iam_role_policy_attachment" "managed" {
  for_each   = toset(var.managed_policy_arns)
  role       = aws_iam_role.this.name
  policy_arn = each.value
}
