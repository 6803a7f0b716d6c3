# A management cluster's Maestro agent and its way to the region's broker
# (Milestone 1): a certificate and key AWS IoT makes in the regional
# account, with a policy that admits the agent to its own consumer's topics
# only, handed to the management cluster's account in a Secrets Manager
# secret that the agent's pods alone read.
#
# aws.regional is the regional account, as the regional pipeline itself:
# its role may make agent certificates and the policies named
# <region>-maestro-agent-* there (internal/render/iam PipelinePolicy);
# aws is the management cluster's account, through its deploy role.

data "aws_partition" "current" {}

data "aws_caller_identity" "regional" {
  provider = aws.regional
}

data "aws_iot_endpoint" "mqtt" {
  provider      = aws.regional
  endpoint_type = "iot:Data-ATS"
}

locals {
  prefix   = "${var.region}-${var.cluster_name}"
  iot      = "arn:${data.aws_partition.current.partition}:iot:${var.region}:${data.aws_caller_identity.regional.account_id}"
  consumer = "sources/maestro/consumers/${var.consumer_name}"
  endpoint = "mqtts://${data.aws_iot_endpoint.mqtt.endpoint_address}:8883"
}

resource "aws_iot_policy" "agent" {
  provider = aws.regional
  name     = "${var.region}-maestro-agent-${var.consumer_name}"
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      {
        Effect   = "Allow"
        Action   = ["iot:Connect"]
        Resource = ["${local.iot}:client/${var.consumer_name}"]
      },
      {
        Effect   = "Allow"
        Action   = ["iot:Subscribe"]
        Resource = ["${local.iot}:topicfilter/${local.consumer}/sourceevents"]
      },
      {
        Effect   = "Allow"
        Action   = ["iot:Receive"]
        Resource = ["${local.iot}:topic/${local.consumer}/sourceevents"]
      },
      {
        Effect   = "Allow"
        Action   = ["iot:Publish"]
        Resource = ["${local.iot}:topic/${local.consumer}/agentevents"]
      },
    ]
  })
  tags = var.tags
}

resource "aws_iot_certificate" "agent" {
  provider = aws.regional
  active   = true
}

resource "aws_iot_policy_attachment" "agent" {
  provider = aws.regional
  policy   = aws_iot_policy.agent.name
  target   = aws_iot_certificate.agent.arn
}

resource "aws_secretsmanager_secret" "agent" {
  name        = "${var.region}-${var.cluster_name}-maestro-agent-mqtt"
  description = "The Maestro agent's MQTT client credentials (AWS IoT Core of the regional account)"
  # The credential goes with the certificate it holds: nothing to recover.
  recovery_window_in_days = 0
  tags                    = var.tags
}

resource "aws_secretsmanager_secret_version" "agent" {
  secret_id = aws_secretsmanager_secret.agent.id
  secret_string = jsonencode({
    endpoint    = local.endpoint
    client_id   = var.consumer_name
    certificate = aws_iot_certificate.agent.certificate_pem
    private_key = aws_iot_certificate.agent.private_key
  })
}

# The agent's pods (maestro/maestro-agent) read that secret, and nothing
# else.
module "trust" {
  source            = "../irsa-trust"
  oidc_provider_arn = var.oidc_provider_arn
  oidc_issuer       = var.oidc_issuer
  service_accounts  = ["maestro:maestro-agent"]
}

module "role" {
  source            = "../iam-role"
  name              = "${local.prefix}-maestro-agent"
  trust_policy_json = module.trust.json
  policy_json = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid      = "ItsMQTTCredentials"
      Effect   = "Allow"
      Action   = ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"]
      Resource = [aws_secretsmanager_secret.agent.arn]
    }]
  })
  permissions_boundary = var.permissions_boundary
  tags                 = var.tags
}
