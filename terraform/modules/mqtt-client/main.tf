# One MQTT client of the region's broker (AWS IoT Core): its IoT policy,
# its certificate and key (made by IoT, in the broker's account), and a
# Secrets Manager secret holding endpoint, client id, certificate, key and
# the broker's root CA, which only the client's pods read (one
# ServiceAccount, through EKS Pod Identity).
#
# aws.broker is the broker's account (the regional account); aws is the
# account the client runs in (the same one for Maestro's server, the
# management cluster's for an agent). The key reaches the secret and this
# module's state, and nothing else.

data "aws_iot_endpoint" "mqtt" {
  provider      = aws.broker
  endpoint_type = "iot:Data-ATS"
}

locals {
  endpoint = "mqtts://${data.aws_iot_endpoint.mqtt.endpoint_address}:8883"
}

resource "aws_iot_policy" "this" {
  provider = aws.broker
  name     = var.policy_name
  policy   = var.policy_json
  tags     = var.tags
}

resource "aws_iot_certificate" "this" {
  provider = aws.broker
  active   = true
}

resource "aws_iot_thing" "this" {
  count    = var.thing_name == null ? 0 : 1
  provider = aws.broker
  name     = var.thing_name
}

resource "aws_iot_thing_principal_attachment" "this" {
  count     = var.thing_name == null ? 0 : 1
  provider  = aws.broker
  thing     = aws_iot_thing.this[0].name
  principal = aws_iot_certificate.this.arn
}

resource "aws_iot_policy_attachment" "this" {
  provider = aws.broker
  policy   = aws_iot_policy.this.name
  target   = aws_iot_certificate.this.arn
}

resource "aws_secretsmanager_secret" "this" {
  name        = var.secret_name
  description = "MQTT client credentials of ${var.client_id} (AWS IoT Core of the regional account)"
  # The credential goes with the certificate it holds: nothing to recover.
  recovery_window_in_days = 0
  tags                    = var.tags
}

resource "aws_secretsmanager_secret_version" "this" {
  secret_id = aws_secretsmanager_secret.this.id
  secret_string = jsonencode({
    endpoint    = local.endpoint
    client_id   = var.client_id
    certificate = aws_iot_certificate.this.certificate_pem
    private_key = aws_iot_certificate.this.private_key
    # The root the broker's certificates chain to: IoT Core's ATS endpoint
    # and an ACM certificate of its custom domain both chain to Amazon Root
    # CA 1 (the copy Debian's ca-certificates ships), which the Maestro
    # charts' clients verify the broker against (ca.crt).
    ca_certificate = file("${path.module}/amazon-root-ca-1.pem")
  })
}

# The pods of one ServiceAccount hold the role that reads the credentials,
# through EKS Pod Identity.
module "trust" {
  source          = "../pod-identity-trust"
  cluster_arn     = var.cluster_arn
  service_account = var.service_account
}

resource "aws_eks_pod_identity_association" "reader" {
  cluster_name    = var.cluster_name
  namespace       = split(":", var.service_account)[0]
  service_account = split(":", var.service_account)[1]
  role_arn        = module.role.arn
  tags            = var.tags
}

module "role" {
  source            = "../iam-role"
  name              = var.role_name
  trust_policy_json = module.trust.trust_json
  policy_json = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid      = "ItsMQTTCredentials"
      Effect   = "Allow"
      Action   = ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"]
      Resource = [aws_secretsmanager_secret.this.arn]
    }]
  })
  permissions_boundary = var.permissions_boundary
  tags                 = var.tags
}
