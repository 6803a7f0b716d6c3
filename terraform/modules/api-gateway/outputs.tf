output "endpoint" {
  description = "The API's base URL: its custom domain (the execute-api endpoint is off); empty until the zone is delegated and the API served."
  value       = var.delegated ? "https://${aws_apigatewayv2_domain_name.api[0].domain_name}" : ""
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

output "delegation" {
  description = "What the parent domain must hold before the API is served: NS records of zone naming name_servers. delegated says whether this apply took them to be there."
  value = {
    zone         = aws_route53_zone.api.name
    name_servers = aws_route53_zone.api.name_servers
    delegated    = var.delegated
  }
}

output "target_group_arn" {
  description = "Where the frontend API's pods register (TargetGroupBinding)."
  value       = aws_lb_target_group.frontend.arn
}

output "vpc_link_id" {
  value = aws_apigatewayv2_vpc_link.this.id
}
