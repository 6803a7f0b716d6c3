// Package e2e holds the end-to-end tests of the provisioning pipelines:
// regionctl runs as a user runs it, against moto_server (an AWS emulator
// on 127.0.0.1), the real terraform binary and a local platform API that
// verifies SigV4 signatures.
//
// The mechanics tests (ordering, idempotency, injected faults, locking,
// resume) use provider-free Terraform roots (terraform_data and the S3
// backend on moto: seconds per run). TestRealRoots applies the product's
// roots with the hashicorp/aws provider from the machine's mirror; it is
// the slow one (see README: Tests).
package e2e
