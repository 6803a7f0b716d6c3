# CLM's source of truth (the FAQ): a PostgreSQL database of its own in the
# regional cluster's private subnets, reachable from its VPC only, encrypted,
# backed up, with a master password AWS generates and keeps in Secrets
# Manager (it never passes through Terraform or its state).

resource "aws_db_subnet_group" "this" {
  name       = var.name
  subnet_ids = var.subnet_ids
  tags       = var.tags
}

resource "aws_security_group" "this" {
  name        = "${var.name}-db"
  description = "PostgreSQL of ${var.name}, from its VPC only"
  vpc_id      = var.vpc_id
  tags        = var.tags
}

resource "aws_vpc_security_group_ingress_rule" "postgres" {
  security_group_id = aws_security_group.this.id
  description       = "PostgreSQL from the cluster's VPC"
  cidr_ipv4         = var.vpc_cidr
  ip_protocol       = "tcp"
  from_port         = 5432
  to_port           = 5432
}

resource "aws_db_instance" "this" {
  identifier                  = var.name
  engine                      = "postgres"
  engine_version              = var.engine_version
  instance_class              = var.instance_class
  allocated_storage           = var.storage_gb
  max_allocated_storage       = var.storage_gb * 4
  storage_type                = "gp3"
  storage_encrypted           = true
  db_name                     = "clm"
  username                    = "clm"
  manage_master_user_password = true
  db_subnet_group_name        = aws_db_subnet_group.this.name
  vpc_security_group_ids      = [aws_security_group.this.id]
  publicly_accessible         = false
  multi_az                    = var.multi_az
  backup_retention_period     = var.backup_retention_days
  deletion_protection         = var.deletion_protection
  skip_final_snapshot         = !var.deletion_protection
  final_snapshot_identifier   = var.deletion_protection ? "${var.name}-final" : null
  copy_tags_to_snapshot       = true
  tags                        = var.tags
}
