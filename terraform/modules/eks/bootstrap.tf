# The bootstrap: a Fargate task in the cluster's own private subnets, the
# seed's way in to a cluster whose API no other network reaches. It runs
# `regionctl argocd bootstrap` from the runner image as the bootstrap role
# (the one access entry, see access.tf): it installs Argo CD and its root
# Application, and from then on Argo CD manages the cluster from inside.
# The pipeline that applied the root starts it after each apply (the
# argocd step: ecs:RunTask on this task definition alone, passing only
# these two roles).

resource "aws_ecs_cluster" "bootstrap" {
  name = "${local.prefix}-bootstrap"
  tags = var.tags
}

resource "aws_cloudwatch_log_group" "bootstrap" {
  name              = "/regionctl/${local.prefix}/bootstrap"
  retention_in_days = var.log_retention_days
  tags              = var.tags
}

# The task reaches the cluster's API (the control plane's extra security
# group below admits it), and HTTPS through the VPC's NAT for the image,
# STS and EKS's DescribeCluster. Nothing may reach the task.
resource "aws_security_group" "bootstrap" {
  name        = "${local.prefix}-bootstrap"
  description = "The bootstrap task of ${local.prefix}: HTTPS out, nothing in"
  vpc_id      = var.vpc_id
  tags        = var.tags
}

resource "aws_vpc_security_group_egress_rule" "bootstrap_https" {
  security_group_id = aws_security_group.bootstrap.id
  cidr_ipv4         = "0.0.0.0/0"
  ip_protocol       = "tcp"
  from_port         = 443
  to_port           = 443
  tags              = var.tags
}

# Attached to the control plane's network interfaces beside the group EKS
# makes: the bootstrap task's way to the private endpoint.
resource "aws_security_group" "api" {
  name        = "${local.prefix}-api"
  description = "The private Kubernetes API of ${local.prefix}, for the bootstrap task"
  vpc_id      = var.vpc_id
  tags        = var.tags
}

resource "aws_vpc_security_group_ingress_rule" "api_from_bootstrap" {
  security_group_id            = aws_security_group.api.id
  referenced_security_group_id = aws_security_group.bootstrap.id
  ip_protocol                  = "tcp"
  from_port                    = 443
  to_port                      = 443
  tags                         = var.tags
}

# Fargate pulls the image and writes the logs as this role (trusted as the
# task role is: ECS tasks of this account); it may do nothing else.
data "aws_iam_policy_document" "bootstrap_execution" {
  statement {
    sid     = "WriteItsLogs"
    actions = ["logs:CreateLogStream", "logs:PutLogEvents"]
    # Named, not read from the group: the role's policy must be known
    # when the root is planned.
    resources = ["arn:${data.aws_partition.current.partition}:logs:${var.region}:${data.aws_caller_identity.current.account_id}:log-group:/regionctl/${local.prefix}/bootstrap:*"]
  }
  statement {
    sid       = "PullImages"
    actions   = ["ecr:GetAuthorizationToken", "ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer"]
    resources = ["*"]
  }
}

module "bootstrap_execution_role" {
  source               = "../iam-role"
  name                 = "${local.prefix}-bootstrap-ecs"
  trust_policy_json    = data.aws_iam_policy_document.bootstrap_trust.json
  policy_json          = data.aws_iam_policy_document.bootstrap_execution.json
  permissions_boundary = var.permissions_boundary
  tags                 = var.tags
}

resource "aws_ecs_task_definition" "bootstrap" {
  family                   = "${local.prefix}-bootstrap"
  requires_compatibilities = ["FARGATE"]
  network_mode             = "awsvpc"
  cpu                      = "512"
  memory                   = "1024"
  task_role_arn            = module.bootstrap_role.arn
  execution_role_arn       = module.bootstrap_execution_role.arn
  runtime_platform {
    operating_system_family = "LINUX"
    cpu_architecture        = "X86_64"
  }
  # The arguments are argv, never a shell: the pipeline adds the root
  # Application (the rendered file, as data) when it starts the task, and
  # the task refuses one whose source is not the fleet repository named here
  # from the reviewed config.
  container_definitions = jsonencode([{
    name                   = "bootstrap"
    image                  = var.runner_image
    essential              = true
    cpu                    = 512
    memory                 = 1024
    command                = ["argocd", "bootstrap", "--region", var.region, "--cluster", var.name, "--repo-url", var.gitops_repo_url]
    readonlyRootFilesystem = true
    user                   = "65532:65532"
    linuxParameters        = { capabilities = { drop = ["ALL"] } }
    logConfiguration = {
      logDriver = "awslogs"
      options = {
        awslogs-group         = aws_cloudwatch_log_group.bootstrap.name
        awslogs-region        = var.region
        awslogs-stream-prefix = "bootstrap"
      }
    }
  }])
  tags = var.tags
}
