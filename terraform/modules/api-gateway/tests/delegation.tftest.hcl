# The platform API's zone is made by the same apply that would validate its
# certificate. ACM validates a DNS record only where public DNS resolves it
# (ACM User Guide, "DNS validation"), so before the parent domain delegates
# the zone, nothing may wait for the certificate: the provider's
# aws_acm_certificate_validation would wait out its 75 minutes. Planned with
# Terraform's own planner against a mocked provider (no AWS, no network).

mock_provider "aws" {}

# The real provider knows each validation option's domain_name at plan
# time (it derives them from domain_name and the alternative names), which
# is what the provider's documented for_each over domain_validation_options
# relies on; a mock knows nothing until apply, so the plan is told (and
# given an ARN the provider's own checks accept).
override_resource {
  target          = aws_acm_certificate.api
  override_during = plan
  values = {
    arn = "arn:aws:acm:eu-west-1:111122223333:certificate/01234567-89ab-cdef-0123-456789abcdef"
    domain_validation_options = [{
      domain_name           = "api.eu-west-1.example.com"
      resource_record_name  = "_0123456789abcdef.api.eu-west-1.example.com."
      resource_record_type  = "CNAME"
      resource_record_value = "_fedcba9876543210.acm-validations.aws."
    }]
  }
}

variables {
  name       = "eu-west-1-api"
  region     = "eu-west-1"
  domain     = "api.eu-west-1.example.com"
  vpc_id     = "vpc-0123456789abcdef0"
  vpc_cidr   = "10.0.0.0/16"
  subnet_ids = ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"]
}

run "undelegated_waits_for_nothing" {
  command = plan
  variables {
    delegated = false
  }
  assert {
    condition     = length(aws_acm_certificate_validation.api) == 0
    error_message = "the certificate is validated before its zone is delegated: the apply would wait out ACM's timeout"
  }
  assert {
    condition     = length(aws_lb_listener.https) + length(aws_apigatewayv2_domain_name.api) + length(aws_apigatewayv2_api_mapping.api) + length(aws_route53_record.api) + length(aws_apigatewayv2_integration.frontend) + length(aws_apigatewayv2_route.api) + length(aws_apigatewayv2_stage.default) == 0
    error_message = "something that needs the issued certificate is made before the zone is delegated"
  }
  assert {
    condition     = output.endpoint == ""
    error_message = "an endpoint is given for an API that is not served"
  }
  assert {
    condition     = output.delegation.delegated == false && length(aws_route53_record.validation) == 1
    error_message = "the validation record must be written (it waits in the zone for the delegation) and the output must say the zone is not delegated"
  }
}

run "delegated_serves_the_api" {
  command = plan
  variables {
    delegated = true
  }
  assert {
    condition     = length(aws_acm_certificate_validation.api) == 1 && length(aws_lb_listener.https) == 1 && length(aws_apigatewayv2_domain_name.api) == 1 && length(aws_route53_record.api) == 1 && length(aws_apigatewayv2_route.api) == 1
    error_message = "a delegated zone's API is not served"
  }
}
