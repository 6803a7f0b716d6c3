# The regional platform API's entry, as the FAQ lays it out: API Gateway
# (a regional endpoint) -> VPC Link v2 -> an internal ALB -> the frontend
# API's pods in the regional cluster, served at api.<region>.<domain>.
#
# - Every route requires SigV4 (IAM authorization): the caller's identity
#   reaches the frontend as headers API Gateway writes itself (overwrite:
#   a caller cannot set them), never as anything the caller says.
# - The API is reached through its custom domain only (the execute-api
#   endpoint is switched off), with a certificate ACM issues for that name,
#   validated in the domain's own zone.
# - That zone is made here, so nobody has delegated it yet on the first
#   apply: ACM validates a DNS record only where public DNS resolves it
#   (ACM User Guide, "DNS validation"), and aws_acm_certificate_validation
#   would wait out its 75 minutes. Until var.delegated, the apply makes the
#   zone, the certificate and its validation record, and nothing that waits
#   for the certificate (its validation, the ALB's listener, the custom
#   domain and everything API Gateway serves through them); the output
#   delegation names the NS records the parent domain needs.
# - The ALB is internal and admits only the VPC link; TLS runs to it too,
#   checked against the same name. The frontend's pods register in its
#   target group (the AWS Load Balancer Controller's TargetGroupBinding).
#
# The HTTP API (API Gateway v2) carries VPC Link v2; a REST API reaches an
# ALB over VPC Link v2 only with integration_target, which the pinned
# provider (5.100) does not have.

locals {
  # The frontend's own headers for the caller's identity; API Gateway
  # refuses to map x-amz-* and x-amzn-* names.
  identity_headers = {
    "overwrite:header.X-Platform-Caller-Arn"     = "$context.identity.userArn"
    "overwrite:header.X-Platform-Caller-Account" = "$context.identity.accountId"
    "overwrite:header.X-Platform-Request-Id"     = "$context.requestId"
  }
}

# The API's name, as a zone of its own: the parent domain delegates it
# (output name_servers), and the certificate is validated in it.
resource "aws_route53_zone" "api" {
  name          = var.domain
  comment       = "The platform API of ${var.region}"
  force_destroy = false
  tags          = var.tags
}

resource "aws_acm_certificate" "api" {
  domain_name       = var.domain
  validation_method = "DNS"
  tags              = var.tags
  lifecycle {
    create_before_destroy = true
  }
}

resource "aws_route53_record" "validation" {
  for_each = {
    for o in aws_acm_certificate.api.domain_validation_options : o.domain_name => {
      name  = o.resource_record_name
      type  = o.resource_record_type
      value = o.resource_record_value
    }
  }
  zone_id = aws_route53_zone.api.zone_id
  name    = each.value.name
  type    = each.value.type
  ttl     = 300
  records = [each.value.value]
}

resource "aws_acm_certificate_validation" "api" {
  count                   = var.delegated ? 1 : 0
  certificate_arn         = aws_acm_certificate.api.arn
  validation_record_fqdns = [for r in aws_route53_record.validation : r.fqdn]
  # A delegation that is not there after all fails the apply when this runs
  # out, rather than leaving it waiting.
  timeouts {
    create = var.validation_timeout
  }
}

# The VPC link's network interfaces may reach the ALB's listener, and the
# ALB admits nothing else.
resource "aws_security_group" "vpc_link" {
  name        = "${var.name}-vpc-link"
  description = "API Gateway's VPC link to the platform API's internal ALB"
  vpc_id      = var.vpc_id
  tags        = var.tags
}

resource "aws_security_group" "alb" {
  name        = "${var.name}-alb"
  description = "The platform API's internal ALB: from the VPC link only"
  vpc_id      = var.vpc_id
  tags        = var.tags
}

resource "aws_vpc_security_group_egress_rule" "vpc_link_to_alb" {
  security_group_id            = aws_security_group.vpc_link.id
  referenced_security_group_id = aws_security_group.alb.id
  ip_protocol                  = "tcp"
  from_port                    = 443
  to_port                      = 443
}

resource "aws_vpc_security_group_ingress_rule" "alb_from_vpc_link" {
  security_group_id            = aws_security_group.alb.id
  referenced_security_group_id = aws_security_group.vpc_link.id
  ip_protocol                  = "tcp"
  from_port                    = 443
  to_port                      = 443
}

resource "aws_vpc_security_group_egress_rule" "alb_to_frontend" {
  security_group_id = aws_security_group.alb.id
  description       = "The frontend API's pods, in the cluster's VPC"
  cidr_ipv4         = var.vpc_cidr
  ip_protocol       = "tcp"
  from_port         = var.frontend_port
  to_port           = var.frontend_port
}

resource "aws_lb" "api" {
  name                       = var.name
  internal                   = true
  load_balancer_type         = "application"
  subnets                    = var.subnet_ids
  security_groups            = [aws_security_group.alb.id]
  drop_invalid_header_fields = true
  enable_deletion_protection = false
  tags                       = var.tags
}

resource "aws_lb_target_group" "frontend" {
  name        = var.name
  target_type = "ip"
  protocol    = "HTTP"
  port        = var.frontend_port
  vpc_id      = var.vpc_id
  health_check {
    path    = "/api/v0/live"
    matcher = "200"
  }
  tags = var.tags
}

resource "aws_lb_listener" "https" {
  count             = var.delegated ? 1 : 0
  load_balancer_arn = aws_lb.api.arn
  port              = 443
  protocol          = "HTTPS"
  ssl_policy        = "ELBSecurityPolicy-TLS13-1-2-2021-06"
  certificate_arn   = aws_acm_certificate_validation.api[0].certificate_arn
  default_action {
    type             = "forward"
    target_group_arn = aws_lb_target_group.frontend.arn
  }
  tags = var.tags
}

resource "aws_apigatewayv2_vpc_link" "this" {
  name               = var.name
  subnet_ids         = var.subnet_ids
  security_group_ids = [aws_security_group.vpc_link.id]
  tags               = var.tags
}

resource "aws_apigatewayv2_api" "this" {
  name                         = var.name
  protocol_type                = "HTTP"
  description                  = "The platform API of ${var.region}, at https://${var.domain}"
  disable_execute_api_endpoint = true
  tags                         = var.tags
}

resource "aws_apigatewayv2_integration" "frontend" {
  count              = var.delegated ? 1 : 0
  api_id             = aws_apigatewayv2_api.this.id
  integration_type   = "HTTP_PROXY"
  integration_method = "ANY"
  connection_type    = "VPC_LINK"
  connection_id      = aws_apigatewayv2_vpc_link.this.id
  integration_uri    = aws_lb_listener.https[0].arn
  request_parameters = local.identity_headers
  tls_config {
    server_name_to_verify = var.domain
  }
}

resource "aws_apigatewayv2_route" "api" {
  count              = var.delegated ? 1 : 0
  api_id             = aws_apigatewayv2_api.this.id
  route_key          = "ANY /api/{proxy+}"
  authorization_type = "AWS_IAM"
  target             = "integrations/${aws_apigatewayv2_integration.frontend[0].id}"
}

# Who called what, for the security team: one JSON line per request.
resource "aws_cloudwatch_log_group" "access" {
  name              = "/aws/apigateway/${var.name}"
  retention_in_days = var.log_retention_days
  tags              = var.tags
}

resource "aws_apigatewayv2_stage" "default" {
  count       = var.delegated ? 1 : 0
  api_id      = aws_apigatewayv2_api.this.id
  name        = "$default"
  auto_deploy = true
  access_log_settings {
    destination_arn = aws_cloudwatch_log_group.access.arn
    format = jsonencode({
      requestId = "$context.requestId"
      caller    = "$context.identity.userArn"
      account   = "$context.identity.accountId"
      sourceIp  = "$context.identity.sourceIp"
      route     = "$context.routeKey"
      status    = "$context.status"
      error     = "$context.integrationErrorMessage"
    })
  }
  default_route_settings {
    throttling_burst_limit = var.throttling_burst_limit
    throttling_rate_limit  = var.throttling_rate_limit
  }
  tags = var.tags
}

resource "aws_apigatewayv2_domain_name" "api" {
  count       = var.delegated ? 1 : 0
  domain_name = var.domain
  domain_name_configuration {
    certificate_arn = aws_acm_certificate_validation.api[0].certificate_arn
    endpoint_type   = "REGIONAL"
    security_policy = "TLS_1_2"
  }
  tags = var.tags
}

resource "aws_apigatewayv2_api_mapping" "api" {
  count       = var.delegated ? 1 : 0
  api_id      = aws_apigatewayv2_api.this.id
  domain_name = aws_apigatewayv2_domain_name.api[0].id
  stage       = aws_apigatewayv2_stage.default[0].id
}

resource "aws_route53_record" "api" {
  count   = var.delegated ? 1 : 0
  zone_id = aws_route53_zone.api.zone_id
  name    = var.domain
  type    = "A"
  alias {
    name                   = aws_apigatewayv2_domain_name.api[0].domain_name_configuration[0].target_domain_name
    zone_id                = aws_apigatewayv2_domain_name.api[0].domain_name_configuration[0].hosted_zone_id
    evaluate_target_health = false
  }
}
