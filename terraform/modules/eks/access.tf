# Who reaches the cluster's private API, and the controller that puts its
# Services behind AWS load balancers.

data "aws_caller_identity" "current" {}

# The bootstrap runs inside the cluster's own VPC (the seed runs it as an
# ECS Fargate task there: no other cluster has a network path to this API)
# as this role, the one principal with an access entry. It installs Argo CD
# and points it at the cluster's root; from then on Argo CD manages the
# cluster from inside it.
data "aws_iam_policy_document" "bootstrap_trust" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["ecs-tasks.amazonaws.com"]
    }
    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [data.aws_caller_identity.current.account_id]
    }
  }
}

data "aws_iam_policy_document" "bootstrap" {
  statement {
    sid     = "FindItsCluster"
    actions = ["eks:DescribeCluster"]
    # Known before the cluster is (the role's policy must be, to plan).
    resources = ["arn:${data.aws_partition.current.partition}:eks:${var.region}:${data.aws_caller_identity.current.account_id}:cluster/${var.name}"]
  }
}

module "bootstrap_role" {
  source               = "../iam-role"
  name                 = "${local.prefix}-bootstrap"
  trust_policy_json    = data.aws_iam_policy_document.bootstrap_trust.json
  policy_json          = data.aws_iam_policy_document.bootstrap.json
  permissions_boundary = var.permissions_boundary
  tags                 = var.tags
}

resource "aws_eks_access_entry" "bootstrap" {
  cluster_name  = aws_eks_cluster.this.name
  principal_arn = module.bootstrap_role.arn
  type          = "STANDARD"
  tags          = var.tags
}

resource "aws_eks_access_policy_association" "bootstrap" {
  cluster_name  = aws_eks_cluster.this.name
  principal_arn = module.bootstrap_role.arn
  policy_arn    = "arn:${data.aws_partition.current.partition}:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"
  access_scope {
    type = "cluster"
  }
  depends_on = [aws_eks_access_entry.bootstrap]
}

# The AWS Load Balancer Controller (kube-system/aws-load-balancer-controller):
# the load balancers, target groups and security groups it makes carry its
# cluster tag, and it may change only those; it registers targets in any
# target group of the account's region (the platform API's ALB is made by
# Terraform and bound to the frontend's pods).
module "lb_controller_trust" {
  source          = "../pod-identity-trust"
  cluster_arn     = aws_eks_cluster.this.arn
  service_account = "kube-system:aws-load-balancer-controller"
}

resource "aws_eks_pod_identity_association" "lb_controller" {
  cluster_name    = aws_eks_cluster.this.name
  namespace       = "kube-system"
  service_account = "aws-load-balancer-controller"
  role_arn        = module.lb_controller_role.arn
  tags            = var.tags
}

data "aws_iam_policy_document" "lb_controller" {
  statement {
    sid = "Describe"
    actions = [
      "ec2:DescribeAccountAttributes", "ec2:DescribeAddresses", "ec2:DescribeAvailabilityZones", "ec2:DescribeInternetGateways",
      "ec2:DescribeVpcs", "ec2:DescribeVpcPeeringConnections", "ec2:DescribeSubnets", "ec2:DescribeSecurityGroups",
      "ec2:DescribeInstances", "ec2:DescribeNetworkInterfaces", "ec2:DescribeTags", "ec2:DescribeCoipPools",
      "ec2:GetCoipPoolUsage", "ec2:DescribeRouteTables", "ec2:GetSecurityGroupsForVpc",
      "elasticloadbalancing:DescribeLoadBalancers", "elasticloadbalancing:DescribeLoadBalancerAttributes",
      "elasticloadbalancing:DescribeListeners", "elasticloadbalancing:DescribeListenerCertificates",
      "elasticloadbalancing:DescribeListenerAttributes", "elasticloadbalancing:DescribeSSLPolicies",
      "elasticloadbalancing:DescribeRules", "elasticloadbalancing:DescribeTargetGroups",
      "elasticloadbalancing:DescribeTargetGroupAttributes", "elasticloadbalancing:DescribeTargetHealth",
      "elasticloadbalancing:DescribeTags", "elasticloadbalancing:DescribeTrustStores",
      "elasticloadbalancing:DescribeCapacityReservation",
    ]
    resources = ["*"]
  }
  statement {
    sid       = "CreateSecurityGroupsTaggedForTheCluster"
    actions   = ["ec2:CreateSecurityGroup"]
    resources = ["*"]
  }
  statement {
    sid       = "TagOnlyWhatItCreates"
    actions   = ["ec2:CreateTags"]
    resources = ["arn:${data.aws_partition.current.partition}:ec2:*:*:security-group/*"]
    condition {
      test     = "StringEquals"
      variable = "ec2:CreateAction"
      values   = ["CreateSecurityGroup"]
    }
    condition {
      test     = "Null"
      variable = "aws:RequestTag/elbv2.k8s.aws/cluster"
      values   = ["false"]
    }
  }
  statement {
    sid       = "ItsOwnSecurityGroups"
    actions   = ["ec2:CreateTags", "ec2:DeleteTags", "ec2:AuthorizeSecurityGroupIngress", "ec2:RevokeSecurityGroupIngress", "ec2:DeleteSecurityGroup"]
    resources = ["arn:${data.aws_partition.current.partition}:ec2:*:*:security-group/*"]
    condition {
      test     = "Null"
      variable = "aws:ResourceTag/elbv2.k8s.aws/cluster"
      values   = ["false"]
    }
  }
  statement {
    sid       = "CreateLoadBalancersTaggedForTheCluster"
    actions   = ["elasticloadbalancing:CreateLoadBalancer", "elasticloadbalancing:CreateTargetGroup"]
    resources = ["*"]
    condition {
      test     = "Null"
      variable = "aws:RequestTag/elbv2.k8s.aws/cluster"
      values   = ["false"]
    }
  }
  statement {
    # Tags given at creation are authorized as AddTags on the new load
    # balancer or target group, which has no tags yet: ItsOwnLoadBalancers
    # cannot grant them (elasticloadbalancing:CreateAction, Service
    # Authorization Reference for Elastic Load Balancing V2; the
    # controller's own published policy grants the same).
    sid     = "TagWhatItCreates"
    actions = ["elasticloadbalancing:AddTags"]
    resources = [
      "arn:${data.aws_partition.current.partition}:elasticloadbalancing:*:*:loadbalancer/net/*/*",
      "arn:${data.aws_partition.current.partition}:elasticloadbalancing:*:*:loadbalancer/app/*/*",
      "arn:${data.aws_partition.current.partition}:elasticloadbalancing:*:*:targetgroup/*/*",
    ]
    condition {
      test     = "StringEquals"
      variable = "elasticloadbalancing:CreateAction"
      values   = ["CreateTargetGroup", "CreateLoadBalancer"]
    }
    condition {
      test     = "Null"
      variable = "aws:RequestTag/elbv2.k8s.aws/cluster"
      values   = ["false"]
    }
  }
  statement {
    sid = "ListenersAndRules"
    actions = ["elasticloadbalancing:CreateListener", "elasticloadbalancing:DeleteListener", "elasticloadbalancing:CreateRule",
    "elasticloadbalancing:DeleteRule"]
    resources = ["*"]
  }
  statement {
    sid = "ItsOwnLoadBalancers"
    actions = ["elasticloadbalancing:AddTags", "elasticloadbalancing:RemoveTags", "elasticloadbalancing:ModifyLoadBalancerAttributes",
      "elasticloadbalancing:SetIpAddressType", "elasticloadbalancing:SetSecurityGroups", "elasticloadbalancing:SetSubnets",
      "elasticloadbalancing:DeleteLoadBalancer", "elasticloadbalancing:ModifyTargetGroup", "elasticloadbalancing:ModifyTargetGroupAttributes",
    "elasticloadbalancing:DeleteTargetGroup"]
    resources = [
      "arn:${data.aws_partition.current.partition}:elasticloadbalancing:*:*:loadbalancer/net/*/*",
      "arn:${data.aws_partition.current.partition}:elasticloadbalancing:*:*:loadbalancer/app/*/*",
      "arn:${data.aws_partition.current.partition}:elasticloadbalancing:*:*:targetgroup/*/*",
    ]
    condition {
      test     = "Null"
      variable = "aws:ResourceTag/elbv2.k8s.aws/cluster"
      values   = ["false"]
    }
  }
  statement {
    # Listener attributes are authorized on the listener (Service
    # Authorization Reference): a load balancer's ARN never grants them.
    sid     = "ItsOwnListeners"
    actions = ["elasticloadbalancing:ModifyListenerAttributes"]
    resources = [
      "arn:${data.aws_partition.current.partition}:elasticloadbalancing:*:*:listener/net/*/*/*",
      "arn:${data.aws_partition.current.partition}:elasticloadbalancing:*:*:listener/app/*/*/*",
    ]
    condition {
      test     = "Null"
      variable = "aws:ResourceTag/elbv2.k8s.aws/cluster"
      values   = ["false"]
    }
  }
  statement {
    sid       = "RegisterTargets"
    actions   = ["elasticloadbalancing:RegisterTargets", "elasticloadbalancing:DeregisterTargets"]
    resources = ["arn:${data.aws_partition.current.partition}:elasticloadbalancing:*:*:targetgroup/*/*"]
  }
  statement {
    sid       = "ListenerChanges"
    actions   = ["elasticloadbalancing:SetWebAcl", "elasticloadbalancing:ModifyListener", "elasticloadbalancing:AddListenerCertificates", "elasticloadbalancing:RemoveListenerCertificates", "elasticloadbalancing:ModifyRule"]
    resources = ["*"]
  }
}

module "lb_controller_role" {
  source               = "../iam-role"
  name                 = "${local.prefix}-lb-controller"
  trust_policy_json    = module.lb_controller_trust.trust_json
  policy_json          = data.aws_iam_policy_document.lb_controller.json
  permissions_boundary = var.permissions_boundary
  tags                 = var.tags
}
