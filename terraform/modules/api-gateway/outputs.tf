output "endpoint" {
  description = "The API's base URL: its custom domain (the execute-api endpoint is off)."
  value       = "https://${aws_apigatewayv2_domain_name.api.domain_name}"
}

output "api_id" {
  value = aws_apigatewayv2_api.this.id
}

output "zone_id" {
  value = aws_route53_zone.api.zone_id
}

output "name_servers" {
  description = "The API zone's name servers, for the parent domain's delegation."
  value       = aws_route53_zone.api.name_servers
}

output "target_group_arn" {
  description = "Where the frontend API's pods register (TargetGroupBinding)."
  value       = aws_lb_target_group.frontend.arn
}

output "vpc_link_id" {
  value = aws_apigatewayv2_vpc_link.this.id
}
