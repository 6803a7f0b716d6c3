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

locals {
  prefix   = "${var.region}-${var.cluster_name}"
  iot      = "arn:${data.aws_partition.current.partition}:iot:${var.region}:${data.aws_caller_identity.regional.account_id}"
  consumer = "sources/maestro/consumers/${var.consumer_name}"
}

module "agent" {
  source      = "../mqtt-client"
  client_id   = var.consumer_name
  policy_name = "${var.region}-maestro-agent-${var.consumer_name}"
  policy_json = jsonencode({
    Version = "2012-10-17"
    Statement = [
      { Effect = "Allow", Action = ["iot:Connect"], Resource = ["${local.iot}:client/${var.consumer_name}"] },
      { Effect = "Allow", Action = ["iot:Subscribe"], Resource = ["${local.iot}:topicfilter/${local.consumer}/sourceevents"] },
      { Effect = "Allow", Action = ["iot:Receive"], Resource = ["${local.iot}:topic/${local.consumer}/sourceevents"] },
      { Effect = "Allow", Action = ["iot:Publish"], Resource = ["${local.iot}:topic/${local.consumer}/agentevents"] },
    ]
  })
  secret_name          = "${local.prefix}-maestro-agent-mqtt"
  role_name            = "${local.prefix}-maestro-agent"
  service_account      = "maestro:maestro-agent"
  cluster_name         = var.cluster_name
  cluster_arn          = var.cluster_arn
  permissions_boundary = var.permissions_boundary
  tags                 = var.tags
  providers = {
    aws        = aws
    aws.broker = aws.regional
  }
}
