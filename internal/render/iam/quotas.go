package iam

import (
	"fmt"
	"strings"

	"github.com/regionctl/regionctl/internal/iampolicy"
	"github.com/regionctl/regionctl/internal/render/encode"
)

// A Quota is one of AWS's size limits on a kind of policy document, in
// characters of the document without white space (IAM does not count it;
// regionctl installs guardrails minified, so Organizations' count is the
// same).
type Quota struct {
	Kind  string
	Limit int
	// Source is where AWS states the limit.
	Source string
}

// The quotas of the documents regionctl renders (defaults; each can be
// raised only where its source says so).
var (
	TrustQuota         = Quota{"role trust policy", 2048, "IAM User Guide, IAM and AWS STS quotas: role trust policy length"}
	InlineQuota        = Quota{"role's inline policies", 10240, "IAM User Guide, IAM and AWS STS quotas: role policy size (the aggregate of a role's inline policies)"}
	ManagedQuota       = Quota{"managed policy", 6144, "IAM User Guide, IAM and AWS STS quotas: managed policy size"}
	SCPQuota           = Quota{"service control policy", 5120, "Organizations User Guide, Quotas: maximum size of a service control policy"}
	RCPQuota           = Quota{"resource control policy", 5120, "Organizations User Guide, Quotas: maximum size of a resource control policy"}
	BucketPolicyQuota  = Quota{"bucket policy", 20480, "Amazon S3 User Guide, bucket policies: a bucket policy is limited to 20 KB"}
	widestPlaceholders = map[string]string{
		// The widest value each install-time placeholder can take, so that
		// a document under its quota here is under it installed.
		strings.Trim(PipelineAccount, "${}"):   "999999999999",
		strings.Trim(ManagementAccount, "${}"): "999999999999",
		strings.Trim(DRAccount, "${}"):         "999999999999",
		strings.Trim(OrganizationID, "${}"):    "o-" + strings.Repeat("z", 32),
		strings.Trim(RootID, "${}"):            "r-" + strings.Repeat("z", 32),
		strings.Trim(ManagementOU, "${}"):      "ou-" + strings.Repeat("z", 32) + "-" + strings.Repeat("z", 32),
		strings.Trim(OIDCProvider, "${}"):      "oidc.eks.ap-southeast-7.amazonaws.com/id/" + strings.Repeat("F", 32),
		strings.Trim(PlatformAPIID, "${}"):     strings.Repeat("z", 10),
	}
)

// QuotaOf is the quota of a document rendered under a region's iam/ by
// its file name.
func QuotaOf(file string) Quota {
	switch {
	case strings.HasSuffix(file, "-trust.json"):
		return TrustQuota
	case strings.HasSuffix(file, "boundary.json"):
		return ManagedQuota
	case strings.HasPrefix(file, "scp-"):
		return SCPQuota
	case strings.HasPrefix(file, "rcp-"):
		return RCPQuota
	case strings.HasSuffix(file, "bucket-policy.json"):
		return BucketPolicyQuota
	}
	return InlineQuota
}

// Size is the number of characters AWS counts of doc, installed with the
// widest ids: its JSON without white space.
func Size(doc Document) (int, error) {
	// json.Marshal's text (encode.Plain's, without its newline) holds no
	// white space (it compacts what MarshalJSON methods write too), and the
	// widest ids hold none: the filled document is as AWS counts it,
	// counted without being written (iampolicy.SubstitutedRunes).
	// TestSizeIsTheCompactedDocument holds this to json.Compact.
	size := 0
	_, err := encode.Plain.Encode(doc, func(j []byte) ([]byte, error) {
		size = iampolicy.SubstitutedRunes(j[:len(j)-1], widestPlaceholders)
		return nil, nil
	})
	return size, err
}

// CheckQuota says how doc, installed as file, stands against its quota:
// a problem when it is over.
func CheckQuota(file string, doc Document) (size int, problem string) {
	q := QuotaOf(file)
	size, err := Size(doc)
	if err != nil {
		return 0, fmt.Sprintf("%s: %v", file, err)
	}
	if size > q.Limit {
		return size, fmt.Sprintf("%s is %d characters installed, over AWS's limit of %d for a %s (%s)", file, size, q.Limit, q.Kind, q.Source)
	}
	return size, ""
}
