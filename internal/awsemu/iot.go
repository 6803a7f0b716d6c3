package awsemu

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/regionctl/regionctl/internal/render/iam"
)

// iotChecks names the resources of the IoT calls the roots make, as the
// Service Authorization Reference types them: a policy's calls act on the
// policy, a certificate's on the certificate, and attaching a policy on
// the target it is attached to; listing a target's policies on no
// resource.
func iotChecks(e *env) ([]check, error) {
	req := e.req
	arn := "arn:" + e.partition() + ":iot:" + req.Region + ":" + e.p.Account + ":"
	res := "*"
	switch req.Operation {
	case "CreatePolicy", "GetPolicy", "DeletePolicy", "ListPolicyVersions", "CreatePolicyVersion", "DeletePolicyVersion",
		"GetPolicyVersion", "SetDefaultPolicyVersion", "ListTargetsForPolicy":
		res = arn + "policy/" + req.Labels["policyName"]
	case "DescribeCertificate", "UpdateCertificate", "DeleteCertificate":
		res = arn + "cert/" + req.Labels["certificateId"]
	case "AttachPolicy", "DetachPolicy":
		res = req.str("target")
	case "ListAttachedPolicies":
		// AWS authorizes it on no resource type (Service Authorization
		// Reference): "*", whatever target it names.
	case "TagResource", "UntagResource":
		res = req.str("resourceArn")
	case "ListTagsForResource":
		res = req.Query.Get("resourceArn")
	}
	if res == "" {
		res = "*"
	}
	return []check{{Action: "iot:" + req.Operation, Resource: res, Context: e.context(nil)}}, nil
}

// iotTags keeps the tags of IoT resources: moto implements no IoT tagging
// (ListTagsForResource, TagResource, UntagResource), which the aws
// provider calls for every tagged IoT policy, so the gate answers them
// from tags it saw resources created with.
type iotTags struct {
	m sync.Map // resource ARN → map[string]string
}

type iotTag struct {
	Key   string `json:"Key"`
	Value string `json:"Value"`
}

func (t *iotTags) get(arn string) map[string]string {
	v, ok := t.m.Load(arn)
	if !ok {
		return map[string]string{}
	}
	return v.(map[string]string)
}

// learn records the tags of a policy or domain configuration IoT created
// (answer is IoT's answer), and forgets a deleted one's.
func (t *iotTags) learn(account string, req *request, answer []byte) {
	prefix := "arn:" + iam.Partition(req.Region) + ":iot:" + req.Region + ":" + account + ":"
	switch req.Operation {
	case "CreatePolicy":
		t.m.Store(prefix+"policy/"+req.Labels["policyName"], requestTags(req))
	case "DeletePolicy":
		t.m.Delete(prefix + "policy/" + req.Labels["policyName"])
	case "CreateDomainConfiguration":
		// A domain configuration's ARN ends in a suffix IoT chose.
		var out struct {
			Arn string `json:"domainConfigurationArn"`
		}
		if json.Unmarshal(answer, &out) == nil && out.Arn != "" {
			t.m.Store(out.Arn, requestTags(req))
		}
	case "DeleteDomainConfiguration":
		named := prefix + "domainconfiguration/" + req.Labels["domainConfigurationName"] + "/"
		t.m.Range(func(k, _ any) bool {
			if strings.HasPrefix(k.(string), named) {
				t.m.Delete(k)
			}
			return true
		})
	}
}

// requestTags are the tags a create request gives its resource.
func requestTags(req *request) map[string]string {
	tags := map[string]string{}
	for _, raw := range asList(req.JSON["tags"]) {
		if kv, ok := raw.(map[string]any); ok {
			k, _ := kv["Key"].(string)
			v, _ := kv["Value"].(string)
			tags[k] = v
		}
	}
	return tags
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// answer answers IoT's tagging calls; it reports whether it did.
func (t *iotTags) answer(w http.ResponseWriter, req *request) bool {
	switch req.Operation {
	case "ListTagsForResource":
		tags := t.get(req.Query.Get("resourceArn"))
		out := []iotTag{}
		for k, v := range tags {
			out = append(out, iotTag{k, v})
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"tags": out})
	case "TagResource":
		arn := req.str("resourceArn")
		tags := map[string]string{}
		for k, v := range t.get(arn) {
			tags[k] = v
		}
		for k, v := range requestTags(req) {
			tags[k] = v
		}
		t.m.Store(arn, tags)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("{}"))
	case "UntagResource":
		arn := req.str("resourceArn")
		tags := map[string]string{}
		for k, v := range t.get(arn) {
			tags[k] = v
		}
		for _, k := range asList(req.JSON["tagKeys"]) {
			if k, ok := k.(string); ok {
				delete(tags, k)
			}
		}
		t.m.Store(arn, tags)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("{}"))
	default:
		return false
	}
	return true
}
