# AWS IoT Core of the regional account as Maestro's MQTT broker, and the
# Maestro server's credentials for it. Maestro publishes each management
# cluster's work on sources/maestro/consumers/<consumer>/sourceevents and
# hears back on .../agentevents; each agent's own certificate and policy
# (modules/maestro-agent, made by the regional pipeline) admit it to its
# consumer's topics only.

data "aws_caller_identity" "current" {}

data "aws_partition" "current" {}

locals {
  prefix    = "${var.region}-${var.cluster_name}"
  iot       = "arn:${data.aws_partition.current.partition}:iot:${var.region}:${data.aws_caller_identity.current.account_id}"
  client_id = "${var.region}-maestro-server"
  consumers = "sources/maestro/consumers"
}

# The server's policy: its client id; publish work to every consumer, hear
# every consumer back. It admits only a certificate attached to the
# server's thing: the regional pipeline, which makes the agents'
# certificates and may attach policies to them, may attach no certificate
# to a thing, so attaching this policy to one of its certificates connects
# nothing.
module "server" {
  source      = "../mqtt-client"
  client_id   = local.client_id
  thing_name  = local.client_id
  policy_name = "${var.region}-maestro"
  policy_json = jsonencode({
    Version = "2012-10-17"
    Statement = [
      {
        Effect    = "Allow", Action = ["iot:Connect"], Resource = ["${local.iot}:client/${local.client_id}"]
        Condition = { Bool = { "iot:Connection.Thing.IsAttached" = "true" }, StringEquals = { "iot:Connection.Thing.ThingName" = local.client_id } }
      },
      { Effect = "Allow", Action = ["iot:Publish"], Resource = ["${local.iot}:topic/${local.consumers}/*/sourceevents"] },
      { Effect = "Allow", Action = ["iot:Subscribe"], Resource = ["${local.iot}:topicfilter/${local.consumers}/+/agentevents"] },
      { Effect = "Allow", Action = ["iot:Receive"], Resource = ["${local.iot}:topic/${local.consumers}/*/agentevents"] },
    ]
  })
  secret_name     = "${var.region}-maestro-server-mqtt"
  role_name       = "${local.prefix}-maestro-server"
  service_account = "maestro:maestro"
  cluster_name    = var.cluster_name
  cluster_arn     = var.cluster_arn
  tags            = var.tags
  providers = {
    aws        = aws
    aws.broker = aws
  }
}

# The policy existed here before the server's credentials did.
moved {
  from = aws_iot_policy.maestro
  to   = module.server.aws_iot_policy.this
}
