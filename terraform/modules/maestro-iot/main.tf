# AWS IoT Core as Maestro's MQTT broker: the policy that lets Maestro server
# and agents of this region connect and use their topics.

data "aws_caller_identity" "current" {}

data "aws_partition" "current" {}

# The account's own MQTT endpoint (ATS-signed): each account has its own.
data "aws_iot_endpoint" "mqtt" {
  endpoint_type = "iot:Data-ATS"
}

resource "aws_iot_policy" "maestro" {
  name = "${var.region}-maestro"
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      {
        Effect   = "Allow"
        Action   = ["iot:Connect"]
        Resource = ["arn:${data.aws_partition.current.partition}:iot:${var.region}:${data.aws_caller_identity.current.account_id}:client/maestro-*"]
      },
      {
        Effect   = "Allow"
        Action   = ["iot:Publish", "iot:Receive", "iot:Subscribe"]
        Resource = ["arn:${data.aws_partition.current.partition}:iot:${var.region}:${data.aws_caller_identity.current.account_id}:topic*/sources/maestro/*"]
      },
    ]
  })
  tags = var.tags
}
