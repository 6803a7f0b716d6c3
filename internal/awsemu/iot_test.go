package awsemu

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestIoTTagsKept: the tags a policy was created with are listed, tagging
// and untagging change them, and a deleted policy's are forgotten.
func TestIoTTagsKept(t *testing.T) {
	var tags iotTags
	arn := "arn:aws:iot:eu-west-1:111111111111:policy/eu-west-1-maestro"
	list := func() string {
		w := httptest.NewRecorder()
		if !tags.answer(w, &request{Operation: "ListTagsForResource", Query: url.Values{"resourceArn": {arn}}}) {
			t.Fatal("ListTagsForResource not answered")
		}
		return strings.TrimSpace(w.Body.String())
	}
	tags.learn("111111111111", &request{Operation: "CreatePolicy", Region: "eu-west-1", Labels: map[string]string{"policyName": "eu-west-1-maestro"},
		JSON: map[string]any{"tags": []any{map[string]any{"Key": "team", "Value": "a"}, map[string]any{"Key": "env", "Value": "b"}}}}, nil)
	if got := list(); got != `{"tags":[{"Key":"env","Value":"b"},{"Key":"team","Value":"a"}]}` {
		t.Errorf("after create: %s", got)
	}
	tags.answer(httptest.NewRecorder(), &request{Operation: "TagResource", JSON: map[string]any{"resourceArn": arn, "tags": []any{map[string]any{"Key": "team", "Value": "c"}}}})
	tags.answer(httptest.NewRecorder(), &request{Operation: "UntagResource", JSON: map[string]any{"resourceArn": arn, "tagKeys": []any{"env"}}})
	if got := list(); got != `{"tags":[{"Key":"team","Value":"c"}]}` {
		t.Errorf("after tag and untag: %s", got)
	}
	tags.learn("111111111111", &request{Operation: "DeletePolicy", Region: "eu-west-1", Labels: map[string]string{"policyName": "eu-west-1-maestro"}}, nil)
	if got := list(); got != `{"tags":[]}` {
		t.Errorf("after delete: %s", got)
	}
	// A domain configuration's ARN is IoT's answer's; its tags go with it.
	arn = "arn:aws:iot:eu-west-1:111111111111:domainconfiguration/eu-west-1-maestro-broker/AbCdE"
	tags.learn("111111111111", &request{Operation: "CreateDomainConfiguration", Region: "eu-west-1", Labels: map[string]string{"domainConfigurationName": "eu-west-1-maestro-broker"},
		JSON: map[string]any{"tags": []any{map[string]any{"Key": "team", "Value": "a"}}}}, []byte(`{"domainConfigurationName":"eu-west-1-maestro-broker","domainConfigurationArn":"`+arn+`"}`))
	if got := list(); got != `{"tags":[{"Key":"team","Value":"a"}]}` {
		t.Errorf("a domain configuration after create: %s", got)
	}
	tags.learn("111111111111", &request{Operation: "DeleteDomainConfiguration", Region: "eu-west-1", Labels: map[string]string{"domainConfigurationName": "eu-west-1-maestro-broker"}}, nil)
	if got := list(); got != `{"tags":[]}` {
		t.Errorf("a domain configuration after delete: %s", got)
	}
	if tags.answer(httptest.NewRecorder(), &request{Operation: "GetPolicy"}) {
		t.Error("a call that is not tagging was answered")
	}
}
