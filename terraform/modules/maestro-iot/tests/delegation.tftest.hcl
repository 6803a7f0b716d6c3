# The broker's name is served from a certificate validated in the platform
# API's zone, which the same regional apply makes: until the parent domain
# delegates that zone nothing may wait for the certificate (ACM validates a
# record only where public DNS resolves it), so the domain configuration and
# the name wait too. Planned with Terraform's own planner against a mocked
# provider (no AWS, no network).

mock_provider "aws" {}

# The real provider knows the validation options at plan time; a mock does
# not, so the plan is told.
override_resource {
  target          = aws_acm_certificate.broker
  override_during = plan
  values = {
    arn = "arn:aws:acm:eu-west-1:111122223333:certificate/01234567-89ab-cdef-0123-456789abcdef"
    domain_validation_options = [{
      domain_name           = "mqtt.api.eu-west-1.example.com"
      resource_record_name  = "_0123456789abcdef.mqtt.api.eu-west-1.example.com."
      resource_record_type  = "CNAME"
      resource_record_value = "_fedcba9876543210.acm-validations.aws."
    }]
  }
}

override_data {
  target = module.server.module.trust.data.aws_iam_policy_document.trust
  values = {
    json = "{\"Version\":\"2012-10-17\",\"Statement\":[]}"
  }
}

variables {
  region        = "eu-west-1"
  cluster_name  = "regional"
  cluster_arn   = "arn:aws:eks:eu-west-1:111122223333:cluster/regional"
  broker_domain = "mqtt.api.eu-west-1.example.com"
  zone_id       = "Z0123456789ABCDEFGHIJ"
}

run "undelegated_waits_for_nothing" {
  command = plan
  variables {
    delegated = false
  }
  assert {
    condition     = length(aws_acm_certificate_validation.broker) + length(aws_iot_domain_configuration.broker) + length(aws_route53_record.broker) == 0
    error_message = "the broker's certificate, domain configuration or name is made before the zone is delegated: the apply would wait out ACM's timeout"
  }
  assert {
    condition     = length(aws_route53_record.broker_validation) == 1
    error_message = "the broker certificate's validation record is not made with the zone"
  }
}

run "delegated_serves_the_name" {
  command = plan
  variables {
    delegated = true
  }
  assert {
    condition     = length(aws_iot_domain_configuration.broker) == 1 && aws_iot_domain_configuration.broker[0].domain_name == "mqtt.api.eu-west-1.example.com" && aws_iot_domain_configuration.broker[0].service_type == "DATA"
    error_message = "the delegated zone's broker name is not served by IoT Core's data endpoint"
  }
  assert {
    condition     = aws_route53_record.broker[0].type == "CNAME" && aws_route53_record.broker[0].name == "mqtt.api.eu-west-1.example.com"
    error_message = "the broker's name is not a CNAME of the account's data endpoint"
  }
}
