// Package render compiles a validated fleet into the artifacts of deploy/:
// per cluster its effective config and Terraform variables, per region its
// IAM documents, and index.json. Rendering is pure and byte-stable: the
// output depends only on the fleet, the embedded schema and Terraform roots,
// and regionctl's version. Every artifact is checked before it is returned.
//
// Entry point: Render. Each kind of artifact lives in a subpackage
// (effective, tfvars, iam); new kinds are added to the renderers list.
package render
