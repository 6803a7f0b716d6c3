# AWS IoT Core of the regional account as Maestro's MQTT broker, and the
# Maestro server's credentials for it. Maestro publishes each management
# cluster's work on sources/maestro/consumers/<consumer>/sourceevents and
# hears back on .../agentevents; each agent's own certificate and policy
# (modules/maestro-agent, made by the regional pipeline) admit it to its
# consumer's topics only.

data "aws_caller_identity" "current" {}

data "aws_partition" "current" {}

# The account's own MQTT endpoint (ATS-signed): each account has its own.
data "aws_iot_endpoint" "mqtt" {
  endpoint_type = "iot:Data-ATS"
}

locals {
  prefix    = "${var.region}-${var.cluster_name}"
  iot       = "arn:${data.aws_partition.current.partition}:iot:${var.region}:${data.aws_caller_identity.current.account_id}"
  client_id = "${var.region}-maestro-server"
  consumers = "sources/maestro/consumers"
}

resource "aws_iot_policy" "maestro" {
  name = "${var.region}-maestro"
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      {
        Effect   = "Allow"
        Action   = ["iot:Connect"]
        Resource = ["${local.iot}:client/${local.client_id}"]
      },
      {
        Effect   = "Allow"
        Action   = ["iot:Publish"]
        Resource = ["${local.iot}:topic/${local.consumers}/*/sourceevents"]
      },
      {
        Effect   = "Allow"
        Action   = ["iot:Subscribe"]
        Resource = ["${local.iot}:topicfilter/${local.consumers}/+/agentevents"]
      },
      {
        Effect   = "Allow"
        Action   = ["iot:Receive"]
        Resource = ["${local.iot}:topic/${local.consumers}/*/agentevents"]
      },
    ]
  })
  tags = var.tags
}

# The server's certificate and key: AWS IoT makes both; the key is handed
# over once, into the secret the server's pods read, and into this root's
# state (in the central state bucket, which only the central pipeline
# writes and only this region's pipeline reads).
resource "aws_iot_certificate" "server" {
  active = true
}

resource "aws_iot_policy_attachment" "server" {
  policy = aws_iot_policy.maestro.name
  target = aws_iot_certificate.server.arn
}

resource "aws_secretsmanager_secret" "server" {
  name        = "${var.region}-maestro-server-mqtt"
  description = "Maestro server's MQTT client credentials (AWS IoT Core of ${var.region})"
  # The credential goes with the certificate it holds: nothing to recover.
  recovery_window_in_days = 0
  tags                    = var.tags
}

resource "aws_secretsmanager_secret_version" "server" {
  secret_id = aws_secretsmanager_secret.server.id
  secret_string = jsonencode({
    endpoint    = "mqtts://${data.aws_iot_endpoint.mqtt.endpoint_address}:8883"
    client_id   = local.client_id
    certificate = aws_iot_certificate.server.certificate_pem
    private_key = aws_iot_certificate.server.private_key
  })
}

# The server's pods (maestro/maestro) read that secret, and nothing else.
module "trust" {
  source            = "../irsa-trust"
  oidc_provider_arn = var.oidc_provider_arn
  oidc_issuer       = var.oidc_issuer
  service_accounts  = ["maestro:maestro"]
}

module "role" {
  source            = "../iam-role"
  name              = "${local.prefix}-maestro-server"
  trust_policy_json = module.trust.json
  policy_json = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid      = "ItsMQTTCredentials"
      Effect   = "Allow"
      Action   = ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"]
      Resource = [aws_secretsmanager_secret.server.arn]
    }]
  })
  tags = var.tags
}
