package iam

import (
	"bytes"
	"fmt"
	"strings"
	"sync"

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

// SizeEncoded is Size of the document whose JSON is b as deploy/ holds it
// (indented, HTML left as it is: tfvars.MarshalJSON), counted from b
// without encoding the document again: its text outside strings without
// white space. False when b holds what the two encodings write
// differently (<, > and &, which only json.Marshal escapes), for Size to
// count. TestSizeEncodedIsSize (tfvars) holds the two together on every
// document a region renders.
func SizeEncoded(b []byte) (int, bool) {
	if bytes.ContainsAny(b, "<>&") {
		return 0, false
	}
	buf := compacts.Get().(*[]byte)
	defer compacts.Put(buf)
	compact := (*buf)[:0]
	for i := 0; i < len(b); {
		switch b[i] {
		case ' ', '\n', '\t', '\r':
			i++
		case '"':
			// The string whole, to its first quote after an even run of
			// backslashes (or to the end).
			j := i + 1
			for {
				k := bytes.IndexByte(b[j:], '"')
				if k < 0 {
					j = len(b)
					break
				}
				j += k
				escapes := 0
				for m := j - 1; b[m] == '\\'; m-- {
					escapes++
				}
				j++
				if escapes%2 == 0 {
					break
				}
			}
			compact = append(compact, b[i:j]...)
			i = j
		default:
			compact = append(compact, b[i])
			i++
		}
	}
	*buf = compact
	return iampolicy.SubstitutedRunes(compact, widestPlaceholders), true
}

// compacts hold the compacted text SizeEncoded counts, from one document
// to the next.
var compacts = sync.Pool{New: func() any { return new([]byte) }}

// CheckQuota says how doc, installed as file, stands against its quota:
// a problem when it is over.
func CheckQuota(file string, doc Document) (size int, problem string) {
	return CheckQuotaEncoded(file, doc, nil)
}

// CheckQuotaEncoded is CheckQuota of doc, whose JSON as deploy/ holds it
// is b (when not nil), sized from b where it can be (SizeEncoded).
func CheckQuotaEncoded(file string, doc Document, b []byte) (size int, problem string) {
	q := QuotaOf(file)
	size, ok := 0, false
	if b != nil {
		size, ok = SizeEncoded(b)
	}
	if !ok {
		var err error
		if size, err = Size(doc); err != nil {
			return 0, fmt.Sprintf("%s: %v", file, err)
		}
	}
	if size > q.Limit {
		return size, fmt.Sprintf("%s is %d characters installed, over AWS's limit of %d for a %s (%s)", file, size, q.Limit, q.Kind, q.Source)
	}
	return size, ""
}
