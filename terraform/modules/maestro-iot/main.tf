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

# The broker's own name (broker_domain, in the platform API's zone: render
# names it and gives it to the Maestro charts), because an account's IoT
# endpoint is known only once the account exists and a rendered chart value
# cannot hold it. AWS IoT Core serves a custom domain through a domain
# configuration with an ACM certificate for the name (AWS IoT Core Developer
# Guide, "Configurable endpoints": custom domains), and the name is a CNAME
# of the account's data endpoint. Like the API's, the certificate is
# validated in the zone this apply makes, so nothing waits for it until the
# parent domain delegates the zone (var.delegated).
resource "aws_acm_certificate" "broker" {
  domain_name       = var.broker_domain
  validation_method = "DNS"
  tags              = var.tags
  lifecycle {
    create_before_destroy = true
  }
}

resource "aws_route53_record" "broker_validation" {
  for_each = {
    for o in aws_acm_certificate.broker.domain_validation_options : o.domain_name => {
      name  = o.resource_record_name
      type  = o.resource_record_type
      value = o.resource_record_value
    }
  }
  zone_id = var.zone_id
  name    = each.value.name
  type    = each.value.type
  ttl     = 300
  records = [each.value.value]
}

resource "aws_acm_certificate_validation" "broker" {
  count                   = var.delegated ? 1 : 0
  certificate_arn         = aws_acm_certificate.broker.arn
  validation_record_fqdns = [for r in aws_route53_record.broker_validation : r.fqdn]
  timeouts {
    create = var.validation_timeout
  }
}

resource "aws_iot_domain_configuration" "broker" {
  count                   = var.delegated ? 1 : 0
  name                    = "${var.region}-maestro-broker"
  domain_name             = var.broker_domain
  service_type            = "DATA"
  server_certificate_arns = [aws_acm_certificate_validation.broker[0].certificate_arn]
  tags                    = var.tags
}

data "aws_iot_endpoint" "data" {
  endpoint_type = "iot:Data-ATS"
}

resource "aws_route53_record" "broker" {
  count   = var.delegated ? 1 : 0
  zone_id = var.zone_id
  name    = var.broker_domain
  type    = "CNAME"
  ttl     = 300
  records = [data.aws_iot_endpoint.data.endpoint_address]
  # The name answers only once IoT Core serves it.
  depends_on = [aws_iot_domain_configuration.broker]
}
